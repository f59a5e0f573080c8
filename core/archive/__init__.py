"""The index read back: sessions, the catalog (titles, counts), conversations."""
