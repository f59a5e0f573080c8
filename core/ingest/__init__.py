"""Files to rows: the ingestor, source roots, the file reader, batches, the parse worker,
problems and health."""
