-- Reference corpus of the local plagiarism provider (issue 7).
-- Full page texts live in R2 (key in r2_key); D1 holds the page list and the fingerprint index.

CREATE TABLE IF NOT EXISTS plagiarism_pages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  url TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL DEFAULT '',
  word_count INTEGER NOT NULL,
  fingerprint_count INTEGER NOT NULL,
  char_count INTEGER NOT NULL,
  r2_key TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- One row per (winnowed 48-bit n-gram hash, page). The primary key is the lookup index of a
-- check (hash first); the page index serves replacement and deletion.
CREATE TABLE IF NOT EXISTS plagiarism_fingerprints (
  hash INTEGER NOT NULL,
  page_id INTEGER NOT NULL,
  PRIMARY KEY (hash, page_id)
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS plagiarism_fingerprints_page ON plagiarism_fingerprints (page_id);
