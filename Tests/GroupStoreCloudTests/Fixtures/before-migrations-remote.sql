PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
INSERT INTO meta VALUES('kind','groupstore-cloud-remote');
INSERT INTO meta VALUES('format','2');
INSERT INTO meta VALUES('epoch','7acc9c64-dfd4-46ca-800e-55ed22e654ed');
INSERT INTO meta VALUES('horizon','0');
INSERT INTO meta VALUES('created','2026-11-27T20:53:01Z');
CREATE TABLE types (
    name TEXT PRIMARY KEY NOT NULL,
    scope TEXT NOT NULL,
    columns TEXT NOT NULL
);
INSERT INTO types VALUES('note','private','[{"declaredType":"TEXT","isKey":true,"kind":"text","name":"id","notNull":false},{"declaredType":"TEXT","isKey":false,"kind":"text","name":"title","notNull":false}]');
CREATE TABLE records (
    zone TEXT NOT NULL,
    type TEXT NOT NULL,
    name TEXT NOT NULL,
    owner TEXT NOT NULL,
    tag TEXT NOT NULL,
    fields TEXT NOT NULL,
    edited_at REAL NOT NULL,
    edited_by TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0,
    seq INTEGER NOT NULL,
    PRIMARY KEY (zone, type, name)
) WITHOUT ROWID;
INSERT INTO records VALUES('private/alice','note','n1','alice','1-7acc9c64','{"title":{"t":"one"}}',1795812781.4353559017,'alice',0,1);
INSERT INTO records VALUES('private/alice','note','n2','alice','2-7acc9c64','{"title":{"t":"two"}}',1795812781.4353559017,'alice',0,2);
INSERT INTO records VALUES('private/alice','note','n3','alice','3-7acc9c64','{"title":{"t":"from the other group"}}',1795812781.8920629023,'alice',0,3);
CREATE TABLE change_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    zone TEXT NOT NULL,
    type TEXT NOT NULL,
    name TEXT NOT NULL
);
INSERT INTO change_log VALUES(1,'private/alice','note','n1');
INSERT INTO change_log VALUES(2,'private/alice','note','n2');
INSERT INTO change_log VALUES(3,'private/alice','note','n3');
CREATE TABLE assets (
    hash TEXT PRIMARY KEY NOT NULL,
    size INTEGER NOT NULL,
    bytes BLOB NOT NULL
);
CREATE TABLE shares (
    owner TEXT NOT NULL,
    zone TEXT NOT NULL,
    member TEXT NOT NULL,
    can_write INTEGER NOT NULL,
    PRIMARY KEY (owner, zone, member)
);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('change_log',3);
CREATE INDEX records_by_zone_seq ON records (zone, seq);
COMMIT;
