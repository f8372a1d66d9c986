-- Stored dimensions (decisions.md "Scores": a request dimension of type `dimension` merges its
-- `words` with the seeds stored here for its id; unknown id -> 422 DIMENSION_NOT_FOUND).
-- New ones are created through POST /api/admin/v1/dimensions. Seeds are JSON arrays of words.
CREATE TABLE IF NOT EXISTS dimensions (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  language    TEXT NOT NULL DEFAULT 'en',
  description TEXT NOT NULL DEFAULT '',
  words       TEXT NOT NULL CHECK (json_valid(words) AND json_type(words) = 'array'),
  created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  created_by  TEXT
);

-- The documented seeded set (English). Ids 1-99 are reserved for seeded dimensions.
INSERT OR IGNORE INTO dimensions (id, name, language, description, words) VALUES
  (1, 'Positive', 'en', 'Positive sentiment and approval',
   '["good","great","excellent","wonderful","happy","positive","love","best","beautiful","success"]'),
  (2, 'Negative', 'en', 'Negative sentiment and disapproval',
   '["bad","terrible","awful","horrible","sad","negative","hate","worst","ugly","failure"]'),
  (3, 'Science & technology', 'en', 'Research, engineering and computing',
   '["science","technology","research","scientist","computer","engineering","physics","software","data","laboratory"]'),
  (4, 'Nature', 'en', 'Landscape, plants and animals',
   '["nature","forest","river","mountain","tree","animal","flower","ocean","wildlife","landscape"]'),
  (5, 'Food', 'en', 'Food, cooking and eating',
   '["food","cooking","recipe","meal","delicious","kitchen","bread","restaurant","dinner","cheese"]'),
  (6, 'Sports', 'en', 'Sports and competition',
   '["sport","football","soccer","basketball","tennis","team","match","championship","athlete","tournament"]'),
  (7, 'Business & finance', 'en', 'Companies, markets and money',
   '["business","company","market","finance","investment","profit","bank","economy","stock","revenue"]'),
  (8, 'Health', 'en', 'Medicine and well-being',
   '["health","medical","doctor","hospital","patient","disease","treatment","medicine","healthy","care"]');
