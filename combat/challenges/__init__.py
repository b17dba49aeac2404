"""Challenges phone to phone (issue 10): services, selectors, views and URLs."""
