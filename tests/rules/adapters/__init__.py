"""One module per area of the engine, each registering the case kinds it runs."""
