"""Django's PostgreSQL backend, its pool's check without a round trip (:mod:`.base`)."""
