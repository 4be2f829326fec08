PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE groupstore_change (
  id INTEGER PRIMARY KEY,
  entity INTEGER NOT NULL,
  op INTEGER NOT NULL,
  key,
  rid INTEGER
);
INSERT INTO groupstore_change VALUES(1,1,4,'note',NULL);
INSERT INTO groupstore_change VALUES(2,1,1,'n1',NULL);
INSERT INTO groupstore_change VALUES(3,1,1,'n2',NULL);
INSERT INTO groupstore_change VALUES(4,0,6,'app',1795812781262901);
INSERT INTO groupstore_change VALUES(5,1,2,'n1',NULL);
INSERT INTO groupstore_change VALUES(6,0,6,'app',1795812782185120);
CREATE TABLE groupstore_table (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  key_columns INTEGER NOT NULL,
  sql TEXT NOT NULL,
  live INTEGER NOT NULL DEFAULT 1
);
INSERT INTO groupstore_table VALUES(1,'note',1,'CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)',1);
CREATE TABLE groupstore_meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
INSERT INTO groupstore_meta VALUES('epoch','5c0bc990f40a6d284dad8f98d4c41752');
INSERT INTO groupstore_meta VALUES('format',3);
INSERT INTO groupstore_meta VALUES('pruned_through',0);
INSERT INTO groupstore_meta VALUES('registry_version',1);
INSERT INTO groupstore_meta VALUES('schema_text',replace('index sqlite_autoindex_note_1 note \ntable groupstore_cloud_diff groupstore_cloud_diff CREATE TABLE groupstore_cloud_diff(entity TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID\ntable groupstore_cloud_meta groupstore_cloud_meta CREATE TABLE groupstore_cloud_meta(key TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID\ntable groupstore_cloud_parked groupstore_cloud_parked CREATE TABLE groupstore_cloud_parked(\n    entity TEXT NOT NULL, name TEXT NOT NULL, direction TEXT NOT NULL, reason TEXT NOT NULL,\n    record TEXT, parked_at REAL NOT NULL, PRIMARY KEY (entity, name, direction)) WITHOUT ROWID\ntable groupstore_cloud_pending groupstore_cloud_pending CREATE TABLE groupstore_cloud_pending(\n    entity TEXT NOT NULL, name TEXT NOT NULL, edited_at REAL NOT NULL,\n    version INTEGER NOT NULL DEFAULT 1, rounds INTEGER NOT NULL DEFAULT 0,\n    sent TEXT, sent_before TEXT, PRIMARY KEY (entity, name)) WITHOUT ROWID\ntable groupstore_cloud_record groupstore_cloud_record CREATE TABLE groupstore_cloud_record(\n    entity TEXT NOT NULL, name TEXT NOT NULL, zone TEXT NOT NULL, tag TEXT NOT NULL,\n    ancestor TEXT NOT NULL, edited_at REAL NOT NULL, PRIMARY KEY (entity, name)) WITHOUT ROWID\ntable groupstore_cloud_zone groupstore_cloud_zone CREATE TABLE groupstore_cloud_zone(zone TEXT PRIMARY KEY NOT NULL, token TEXT) WITHOUT ROWID\ntable note note CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT)','\n',char(10)));
INSERT INTO groupstore_meta VALUES('schema_version',22);
INSERT INTO groupstore_meta VALUES('trigger_format',6);
CREATE TABLE note(id TEXT PRIMARY KEY, title TEXT);
INSERT INTO note VALUES('n1','edited before the upgrade');
INSERT INTO note VALUES('n2','two');
CREATE TABLE groupstore_cloud_meta(key TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID;
INSERT INTO groupstore_cloud_meta VALUES('account','alice');
INSERT INTO groupstore_cloud_meta VALUES('conflicts',0);
INSERT INTO groupstore_cloud_meta VALUES('format',1);
INSERT INTO groupstore_cloud_meta VALUES('intake_seq',4);
INSERT INTO groupstore_cloud_meta VALUES('last_sync','{"conflicts":0,"fetched":0,"finishedAt":1795812781.455552,"parked":0,"pending":0,"startedAt":1795812781.4341927,"uploaded":2}');
INSERT INTO groupstore_cloud_meta VALUES('tables','note	private	id	title');
CREATE TABLE groupstore_cloud_record(
    entity TEXT NOT NULL, name TEXT NOT NULL, zone TEXT NOT NULL, tag TEXT NOT NULL,
    ancestor TEXT NOT NULL, edited_at REAL NOT NULL, PRIMARY KEY (entity, name)) WITHOUT ROWID;
INSERT INTO groupstore_cloud_record VALUES('note','n1','private/alice','1-7acc9c64','{"title":{"t":"one"}}',1795812781.4353559017);
INSERT INTO groupstore_cloud_record VALUES('note','n2','private/alice','2-7acc9c64','{"title":{"t":"two"}}',1795812781.4353559017);
CREATE TABLE groupstore_cloud_pending(
    entity TEXT NOT NULL, name TEXT NOT NULL, edited_at REAL NOT NULL,
    version INTEGER NOT NULL DEFAULT 1, rounds INTEGER NOT NULL DEFAULT 0,
    sent TEXT, sent_before TEXT, PRIMARY KEY (entity, name)) WITHOUT ROWID;
CREATE TABLE groupstore_cloud_parked(
    entity TEXT NOT NULL, name TEXT NOT NULL, direction TEXT NOT NULL, reason TEXT NOT NULL,
    record TEXT, parked_at REAL NOT NULL, PRIMARY KEY (entity, name, direction)) WITHOUT ROWID;
CREATE TABLE groupstore_cloud_zone(zone TEXT PRIMARY KEY NOT NULL, token TEXT) WITHOUT ROWID;
INSERT INTO groupstore_cloud_zone VALUES('private/alice','7acc9c64-dfd4-46ca-800e-55ed22e654ed:0');
CREATE TABLE groupstore_cloud_diff(entity TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;
CREATE INDEX groupstore_change_pending ON groupstore_change(entity) WHERE op = 5;
CREATE VIEW groupstore_transaction(seq, author, committed_at, last_change) AS SELECT id, key, rid / 1e6, id FROM groupstore_change WHERE op = 6;
CREATE TRIGGER "groupstore_1_bi" BEFORE INSERT ON "note" WHEN EXISTS (SELECT 1 FROM "note" AS c WHERE (c."id" = NEW."id") OR (c.rowid = NEW.rowid)) OR EXISTS (SELECT 1 FROM groupstore_change WHERE op = 5 AND entity = 1) BEGIN UPDATE groupstore_change SET op = 0 WHERE op = 5 AND entity = 1; INSERT INTO groupstore_change(entity, op, key, rid) SELECT 1, 5, c."id", CASE WHEN c."id" IS NULL THEN c.rowid END FROM "note" AS c WHERE (c."id" = NEW."id") OR (c.rowid = NEW.rowid); END;
CREATE TRIGGER "groupstore_1_ai" AFTER INSERT ON "note" BEGIN INSERT INTO groupstore_change(entity, op, key, rid) VALUES (1, 1, NEW."id", CASE WHEN NEW."id" IS NULL THEN NEW.rowid END); END;
CREATE TRIGGER "groupstore_1_ar" AFTER INSERT ON "note" WHEN EXISTS (SELECT 1 FROM groupstore_change WHERE op = 5 AND entity = 1) BEGIN UPDATE groupstore_change SET op = 0 WHERE op = 5 AND entity = 1 AND EXISTS (SELECT 1 FROM "note" AS c WHERE (((c."id" = NEW."id") OR (c.rowid = NEW.rowid)) OR c.rowid = -1) AND NOT (c.rowid = NEW.rowid) AND c."id" IS groupstore_change.key AND CASE WHEN c."id" IS NULL THEN c.rowid END IS groupstore_change.rid); UPDATE groupstore_change SET op = 3 WHERE op = 5 AND entity = 1; END;
CREATE TRIGGER "groupstore_1_ad" AFTER DELETE ON "note" BEGIN INSERT INTO groupstore_change(entity, op, key, rid) VALUES (1, 3, OLD."id", CASE WHEN OLD."id" IS NULL THEN OLD.rowid END); END;
CREATE TRIGGER "groupstore_1_bu" BEFORE UPDATE ON "note" WHEN NOT (typeof(OLD."id") = typeof(NEW."id") AND OLD."id" IS NEW."id" COLLATE BINARY AND CASE WHEN OLD."id" IS NULL THEN OLD.rowid END IS CASE WHEN NEW."id" IS NULL THEN NEW.rowid END AND OLD.rowid IS NEW.rowid) BEGIN UPDATE groupstore_change SET op = 0 WHERE op = 5 AND entity = 1; INSERT INTO groupstore_change(entity, op, key, rid) SELECT 1, 5, c."id", CASE WHEN c."id" IS NULL THEN c.rowid END FROM "note" AS c WHERE ((c."id" = NEW."id") OR (c.rowid = NEW.rowid)) AND NOT (c.rowid = OLD.rowid); END;
CREATE TRIGGER "groupstore_1_au" AFTER UPDATE ON "note" WHEN typeof(OLD."id") = typeof(NEW."id") AND OLD."id" IS NEW."id" COLLATE BINARY AND CASE WHEN OLD."id" IS NULL THEN OLD.rowid END IS CASE WHEN NEW."id" IS NULL THEN NEW.rowid END AND OLD.rowid IS NEW.rowid BEGIN INSERT INTO groupstore_change(entity, op, key, rid) VALUES (1, 2, NEW."id", CASE WHEN NEW."id" IS NULL THEN NEW.rowid END); END;
CREATE TRIGGER "groupstore_1_ax" AFTER UPDATE ON "note" WHEN typeof(OLD."id") = typeof(NEW."id") AND OLD."id" IS NEW."id" COLLATE BINARY AND CASE WHEN OLD."id" IS NULL THEN OLD.rowid END IS CASE WHEN NEW."id" IS NULL THEN NEW.rowid END AND NOT (OLD.rowid IS NEW.rowid) BEGIN UPDATE groupstore_change SET op = 0 WHERE op = 5 AND entity = 1 AND EXISTS (SELECT 1 FROM "note" AS c WHERE (((c."id" = NEW."id") OR (c.rowid = NEW.rowid)) OR c.rowid = -1) AND NOT (c.rowid = NEW.rowid) AND c."id" IS groupstore_change.key AND CASE WHEN c."id" IS NULL THEN c.rowid END IS groupstore_change.rid); UPDATE groupstore_change SET op = 3 WHERE op = 5 AND entity = 1; INSERT INTO groupstore_change(entity, op, key, rid) VALUES (1, 2, NEW."id", CASE WHEN NEW."id" IS NULL THEN NEW.rowid END); END;
CREATE TRIGGER "groupstore_1_am" AFTER UPDATE ON "note" WHEN NOT (typeof(OLD."id") = typeof(NEW."id") AND OLD."id" IS NEW."id" COLLATE BINARY AND CASE WHEN OLD."id" IS NULL THEN OLD.rowid END IS CASE WHEN NEW."id" IS NULL THEN NEW.rowid END) BEGIN UPDATE groupstore_change SET op = 0 WHERE op = 5 AND entity = 1 AND EXISTS (SELECT 1 FROM "note" AS c WHERE (((c."id" = NEW."id") OR (c.rowid = NEW.rowid)) OR c.rowid = -1) AND NOT (c.rowid = NEW.rowid) AND c."id" IS groupstore_change.key AND CASE WHEN c."id" IS NULL THEN c.rowid END IS groupstore_change.rid); UPDATE groupstore_change SET op = 3 WHERE op = 5 AND entity = 1; INSERT INTO groupstore_change(entity, op, key, rid) VALUES (1, 3, OLD."id", CASE WHEN OLD."id" IS NULL THEN OLD.rowid END); INSERT INTO groupstore_change(entity, op, key, rid) VALUES (1, 1, NEW."id", CASE WHEN NEW."id" IS NULL THEN NEW.rowid END); END;
COMMIT;
