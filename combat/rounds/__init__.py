"""Combat rounds on the tablet and the phones (issue 11): services, selectors, views and URLs."""
