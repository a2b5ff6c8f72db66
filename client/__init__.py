"""The terminal client: renders what the server says, and uses ``protocol`` for placement help.

It never imports ``server``; the ``yukon`` command wires the two together when they must run
in one process.
"""
