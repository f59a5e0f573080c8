"""Text analysis shared by indexing and query time: secret masking, CJK bigrams, splitting."""
