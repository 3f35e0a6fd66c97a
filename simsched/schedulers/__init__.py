"""Interchangeable scheduling policies, all reached through :mod:`simsched.schedulers.registry`."""
