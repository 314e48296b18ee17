"""The outbox relays: rows written in a change's own transaction, sent afterwards to the queue
or bus that carries them on. Below the stages and above storage and the AWS adapters, so that
the function that writes an outbox (the worker writes the article outbox) relays it without
loading the stage that consumes it (the extractor's trafilatura, lxml and protego)."""
