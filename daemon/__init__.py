"""The only place with I/O: the command line now; the HTTP service, storage and scheduler later."""
