"""Vieira & Bauer (SmoothTCP driven by ICMP source quench): the reproduction
``smoothtcp.toml``."""
