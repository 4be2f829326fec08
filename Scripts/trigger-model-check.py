#!/usr/bin/env python3
"""Randomized model check of GroupStore's history triggers.

An outside writer (Python's sqlite3) runs random transactions of every
statement kind (REPLACE, UPSERT, OR IGNORE, key and rowid moves, NULL keys,
negative rowids, failing statements, rollbacks) on eight tables of every key
kind (g and h: NOCASE keys, composite and single, whose updates may change a
key only in its recorded form: 'x' to 'X', 1 to 1.0; as documented in
"Decoding a stored key", a key's identity is its recorded form, so such a
change is expected as a delete of the old key and an insert of the new);
after each commit, the change rows the triggers recorded are folded
(docs/PAYLOAD-FORMAT.md, "Folding") and compared with the tables' contents
before and after. Prints the counts and one line per discrepancy class.

usage: swift build --product groupstore
       python3 Scripts/trigger-model-check.py [--seed N] [--txns N] [--no-crowid]
(about 10 minutes for 20,000 transactions; written by a review session in
2026-11, where it found the rowid bugs fixed by trigger format 4)
"""
import sqlite3, shutil, random, sys, os, argparse, json, collections, subprocess, tempfile

SCHEMA = """CREATE TABLE a(id INTEGER PRIMARY KEY, email TEXT UNIQUE, v); CREATE TABLE b(x, v);
CREATE TABLE c(k1 TEXT, k2 INT, v, PRIMARY KEY(k1,k2)); CREATE TABLE d(k TEXT PRIMARY KEY, u INT UNIQUE, v) WITHOUT ROWID;
CREATE TABLE e(id INTEGER PRIMARY KEY, a TEXT COLLATE NOCASE, b, v, UNIQUE(a,b)); CREATE TABLE f(x UNIQUE, v);
CREATE TABLE g(a TEXT COLLATE NOCASE, b, v, PRIMARY KEY(a, b)); CREATE TABLE h(a COLLATE NOCASE PRIMARY KEY, u UNIQUE, v) WITHOUT ROWID"""

def make_base(groupstore, directory):
    """A group whose eight tables carry the triggers of the groupstore binary given."""
    group = os.path.join(directory, 'group')
    subprocess.run([groupstore, 'exec', '--group', group, '--member', 'modelcheck', '--sql', SCHEMA], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(group, 'store.sqlite')

ENT = {}  # table name -> id in groupstore_table, read from the base
TABLES = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']

def q(v):
    if v is None: return 'NULL'
    if isinstance(v, str): return "'" + v.replace("'", "''") + "'"
    if isinstance(v, bytes): return "X'" + v.hex() + "'"
    return repr(v)

def tv(v):
    return (type(v).__name__, v)

# ---------------------------------------------------------------- snapshot
def keyed(con, sql):
    """Rows of `sql` (key first) by their key, as recorded: type and value."""
    return {tv(r[0]): tuple(map(tv, r)) for r in con.execute(sql)}

def composite_keyed(con, sql):
    """Rows of `sql` (rowid, then two key parts) by their composite key; a
    NULL part makes the key the rowid. A key's identity is its recorded form
    (type and bytes), so 'x'/'X' and 1/1.0 are different keys."""
    rows = {}
    for r in con.execute(sql):
        k = ('rowid', r[0]) if r[1] is None or r[2] is None else (tv(r[1]), tv(r[2]))
        rows[k] = tuple(map(tv, r))
    return rows

def snapshot(con):
    return {
        'a': keyed(con, 'select id,email,v from a'),
        'b': keyed(con, 'select rowid,x,v from b'),
        'c': composite_keyed(con, 'select rowid,k1,k2,v from c'),
        'd': keyed(con, 'select k,u,v from d'),
        'e': keyed(con, 'select id,a,b,v from e'),
        'f': keyed(con, 'select rowid,x,v from f'),
        # g: NOCASE text and untyped key parts; h: a single NOCASE key (its
        # identity is its recorded form as well: 'x' and 'X' differ)
        'g': composite_keyed(con, 'select rowid,a,b,v from g'),
        'h': keyed(con, 'select a,u,v from h'),
    }

def decode_comp(text):
    out = []
    for comp in text.split(','):
        t, val = comp[0], comp[1:]
        if t == 'i': out.append(('int', int(val)))
        elif t == 'r': out.append(('float', float(val)))
        elif t == 't': out.append(('str', bytes.fromhex(val).decode()))
        elif t == 'b': out.append(('bytes', bytes.fromhex(val)))
        elif t == 'n': out.append(('NoneType', None))
        else: raise ValueError(text)
    return tuple(out)

def decode_key(table, key, rid):
    if rid is not None:
        return ('rowid', rid)
    if table in ('c', 'g'):
        return decode_comp(key)
    return tv(key)

NAME = {}  # id -> table name, filled with ENT

def fold(rows):
    """rows: list of (table, key, op) in id order. returns {table:{key:state}}, anomalies"""
    st = collections.defaultdict(dict)
    anomalies = []
    for t, k, op in rows:
        cur = st[t].get(k, 'none0')   # none0: never seen
        if op == 1:
            nxt = {'none0': 'ins', 'none': 'ins', 'del': 'upd'}.get(cur)
        elif op == 2:
            nxt = {'none0': 'upd', 'ins': 'ins', 'upd': 'upd'}.get(cur)
        elif op == 3:
            nxt = {'none0': 'del', 'ins': 'none', 'upd': 'del'}.get(cur)
        if nxt is None:
            anomalies.append((t, k, cur, op))
            nxt = cur
        st[t][k] = nxt
    return st, anomalies

# ---------------------------------------------------------------- generator
class Gen:
    def __init__(self, rng, crowid=True):
        self.r = rng
        self.crowid = crowid

    def ch(self, xs):
        return self.r.choice(xs)

    def v(self):
        return self.r.randint(0, 2)

    def rid(self):
        return self.ch([-2, -1, -1, 0, 1, 2, 3, 4, 5, 6, 7])

    # value pools
    def val(self, t, col):
        c = self.ch
        if t == 'a':
            return {'id': lambda: c([None, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7]),
                    'email': lambda: c(['e0', 'e1', 'e2', 'e3', 'e4', None, 5, '5']),
                    'v': self.v}[col]()
        if t == 'b':
            return {'rowid': lambda: c([None, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7]),
                    'x': lambda: c([0, 1, 2, None]), 'v': self.v}[col]()
        if t == 'c':
            return {'rowid': lambda: c([None, -2, -1, 0, 1, 2, 3, 4, 5, 6]),
                    'k1': lambda: c(['p', 'q', 'r', None, 1]),
                    'k2': lambda: c([1, 2, 3, None, '2', 1.5]),
                    'v': self.v}[col]()
        if t == 'd':
            return {'k': lambda: c(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 1, '1']),
                    'u': lambda: c([0, 1, 2, 3, 4, None, '3', 2.0]),
                    'v': self.v}[col]()
        if t == 'e':
            return {'id': lambda: c([None, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7]),
                    'a': lambda: c(['x', 'X', 'y', 'Y', 'z', None]),
                    'b': lambda: c([1, 2, None, '1']),
                    'v': self.v}[col]()
        if t == 'f':
            return {'rowid': lambda: c([None, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7]),
                    'x': lambda: c([0, 1, 2, 3, 4, None, '1', 1.0]),
                    'v': self.v}[col]()
        if t == 'g':
            return {'rowid': lambda: c([None, -2, -1, 0, 1, 2, 3, 4, 5, 6]),
                    'a': lambda: c(['x', 'X', 'x', 'X', 'y', 'Y', None, 1, b'\x01']),
                    'b': lambda: c([1, 1.0, '1', b'\x01', None, 2]),
                    'v': self.v}[col]()
        if t == 'h':
            return {'a': lambda: c(['x', 'X', 'x', 'X', 'y', 'Y', 1, 1.0, '1', b'\x01', None]),
                    'u': lambda: c([0, 1, 1.0, '1', 2, None, 'u', 'U']),
                    'v': self.v}[col]()

    # updates of g and h that change a key only in its recorded form (case, numeric type),
    # or in its type; met after an OR IGNORE has left pending rows behind
    FORM = {'g': ['a = upper(a)', 'a = lower(a)', 'b = b + 0.0', 'b = CAST(b AS INTEGER)',
                  "b = CASE typeof(b) WHEN 'integer' THEN b + 0.0 WHEN 'real' THEN CAST(b AS INTEGER) ELSE b END",
                  'a = upper(a), b = b + 0.0', 'rowid = rowid + 1', 'rowid = -rowid', 'a = CAST(a AS BLOB)'],
            'h': ['a = upper(a)', 'a = lower(a)', 'a = a + 0.0', 'a = CAST(a AS INTEGER)',
                  "a = CASE typeof(a) WHEN 'integer' THEN a + 0.0 WHEN 'real' THEN CAST(a AS INTEGER) "
                  "WHEN 'text' THEN CASE WHEN a = lower(a) THEN upper(a) ELSE lower(a) END ELSE a END",
                  'a = upper(a), u = u + 0.0', 'u = upper(u)', 'u = u + 0.0']}

    KEYCOL = {'a': 'id', 'b': 'rowid', 'c': None, 'd': 'k', 'e': 'id', 'f': 'rowid', 'g': None, 'h': 'a'}
    COLS = {'a': ['id', 'email', 'v'], 'b': ['rowid', 'x', 'v'], 'c': ['rowid', 'k1', 'k2', 'v'],
            'd': ['k', 'u', 'v'], 'e': ['id', 'a', 'b', 'v'], 'f': ['rowid', 'x', 'v'],
            'g': ['rowid', 'a', 'b', 'v'], 'h': ['a', 'u', 'v']}
    TARGETS = {'a': ['id', 'email'], 'b': [], 'c': ['k1,k2'], 'd': ['k', 'u'], 'e': ['id', 'a,b'], 'f': ['x'],
               'g': ['a,b'], 'h': ['a', 'u']}
    UNIQ = {'a': ['email'], 'b': [], 'c': ['k1', 'k2'], 'd': ['u'], 'e': ['a', 'b'], 'f': ['x'],
            'g': ['a', 'b'], 'h': ['u']}

    def cols_for_insert(self, t):
        cols = list(self.COLS[t])
        if t == 'c' and (not self.crowid or self.r.random() < 0.6):
            cols.remove('rowid')
        elif t == 'g' and self.r.random() < 0.6:
            cols.remove('rowid')
        elif t in ('a', 'b', 'e', 'f') and self.r.random() < 0.35:
            cols.remove(cols[0])        # let SQLite choose the rowid
        return cols

    def where(self, t):
        r = self.r.random()
        if r < 0.5:
            if t == 'c':
                k1, k2 = self.val('c', 'k1'), self.val('c', 'k2')
                if self.r.random() < 0.3:
                    return 'rowid = %s' % q(self.val('c', 'rowid'))
                return 'k1 IS %s AND k2 IS %s' % (q(k1), q(k2))
            if t == 'g':
                a, b = self.val('g', 'a'), self.val('g', 'b')
                x = self.r.random()
                if x < 0.3:
                    return 'rowid = %s' % q(self.val('g', 'rowid'))
                if x < 0.5:
                    return 'a = %s AND b = %s' % (q(a), q(b))      # NOCASE and numeric equality
                return 'a IS %s AND b IS %s' % (q(a), q(b))
            kc = self.KEYCOL[t]
            return '%s = %s' % (kc, q(self.val(t, kc)))
        if r < 0.8:
            return 'v = %s' % q(self.v())
        if r < 0.9:
            u = self.ch(self.UNIQ[t] or ['v'])
            return '%s = %s' % (u, q(self.val(t, u)))
        return '1'

    def conf(self, opts):
        return self.ch(opts)

    def stmt(self, t):
        c = self.ch
        if t in self.FORM and self.r.random() < 0.15:
            verb = c(['UPDATE', 'UPDATE', 'UPDATE OR REPLACE', 'UPDATE OR IGNORE'])
            return '%s %s SET %s WHERE %s' % (verb, t, c(self.FORM[t]), self.where(t))
        r = self.r.random()
        if r < 0.40:   # plain/or-X insert, possibly multi-row
            cols = self.cols_for_insert(t)
            n = 1 if self.r.random() < 0.75 else self.r.randint(2, 3)
            rows = ['(' + ','.join(q(self.val(t, col)) for col in cols) + ')' for _ in range(n)]
            verb = c(['INSERT', 'INSERT', 'INSERT OR REPLACE', 'INSERT OR REPLACE', 'REPLACE',
                      'INSERT OR IGNORE', 'INSERT OR FAIL', 'INSERT OR ABORT', 'INSERT OR ROLLBACK'])
            return '%s INTO %s(%s) VALUES %s' % (verb, t, ','.join(cols), ','.join(rows))
        if r < 0.55 and self.TARGETS[t]:   # upsert
            cols = self.cols_for_insert(t)
            row = '(' + ','.join(q(self.val(t, col)) for col in cols) + ')'
            verb = c(['INSERT', 'INSERT', 'INSERT OR REPLACE', 'INSERT OR IGNORE'])
            clauses = []
            # distinct targets only: a repeated target with a rowid collision corrupts the
            # database in SQLite 3.40.1 even without triggers (see report)
            tgts = self.r.sample(self.TARGETS[t] + [None], min(c([1, 1, 2]), len(self.TARGETS[t]) + 1))
            if None in tgts:
                tgts.remove(None); tgts.append(None)
            for tgt in tgts:
                if tgt is None:
                    clauses.append('ON CONFLICT DO NOTHING')
                    break
                if self.r.random() < 0.3:
                    clauses.append('ON CONFLICT(%s) DO NOTHING' % tgt)
                else:
                    sets = ['v = excluded.v + 10']
                    if self.r.random() < 0.4:
                        col = c([x for x in self.COLS[t] if x != 'v'])
                        sets.append('%s = %s' % (col, c(['excluded.' + col, q(self.val(t, col))])))
                    clauses.append('ON CONFLICT(%s) DO UPDATE SET %s' % (tgt, ', '.join(sets)))
            return '%s INTO %s(%s) VALUES %s %s' % (verb, t, ','.join(cols), row, ' '.join(clauses))
        if r < 0.62:   # insert ... select
            cols = self.cols_for_insert(t)
            verb = c(['INSERT', 'INSERT OR REPLACE', 'INSERT OR IGNORE', 'REPLACE'])
            exprs = []
            for col in cols:
                if col == 'v':
                    exprs.append('v + 1')
                elif self.r.random() < 0.5:
                    exprs.append(col if t != 'c' or col != 'rowid' else 'rowid')
                elif col in ('id', 'rowid') and self.r.random() < 0.5:
                    exprs.append('%s + %d' % (col, c([1, -1, 2])))
                else:
                    exprs.append(q(self.val(t, col)))
            return '%s INTO %s(%s) SELECT %s FROM %s WHERE %s' % (
                verb, t, ','.join(cols), ','.join(exprs), t, self.where(t))
        if r < 0.85:   # update
            verb = c(['UPDATE', 'UPDATE', 'UPDATE OR REPLACE', 'UPDATE OR REPLACE', 'UPDATE OR IGNORE', 'UPDATE OR FAIL'])
            cols = [x for x in self.COLS[t] if not (t == 'c' and x == 'rowid' and not self.crowid)]
            sets = []
            for col in self.r.sample(cols, self.r.randint(1, 2)):
                if col in ('id', 'rowid') and self.r.random() < 0.3:
                    sets.append('%s = %s + 1' % (col, col))
                elif col == 'v' and self.r.random() < 0.3:
                    sets.append('v = v')       # no-op
                else:
                    val = self.val(t, col)
                    if col in ('id', 'rowid') and val is None:
                        val = -1
                    sets.append('%s = %s' % (col, q(val)))
            return '%s %s SET %s WHERE %s' % (verb, t, ', '.join(sets), self.where(t))
        # delete
        return 'DELETE FROM %s WHERE %s' % (t, self.where(t))

    def txn(self):
        n = self.r.randint(1, 5)
        if self.r.random() < 0.6:
            t = self.ch(TABLES)
            ts = [t] * n
        else:
            ts = [self.ch(TABLES) for _ in range(n)]
        return [self.stmt(t) for t in ts]

# ---------------------------------------------------------------- checker
class Checker:
    def __init__(self, path):
        self.con = sqlite3.connect(path, isolation_level=None)
        self.problems = []          # (class, txn_index, detail)
        self.stats = collections.Counter()
        self.old_sig = self.sig(10**18)
        self.pending_seen = 0

    def maxid(self):
        return self.con.execute('select coalesce(max(id),0) from groupstore_change').fetchone()[0]

    def sig(self, upto):
        # signature of all non-pending/non-retired rows up to an id: must never change
        return self.con.execute(
            'select count(*), total(id*op), total(id*entity) from groupstore_change '
            'where id <= ? and op in (1,2,3,4)', (upto,)).fetchone()

    def run_txn(self, stmts, idx, rollback_on_error_prob, rng):
        con = self.con
        before = snapshot(con)
        mx = self.maxid()
        sig_before = self.sig(mx)
        pend_before = dict(con.execute('select id, op from groupstore_change where op = 5').fetchall())
        con.execute('BEGIN')
        executed = []
        rolled = False
        for s in stmts:
            try:
                con.execute(s)
                executed.append((s, None))
                self.stats['stmt_ok'] += 1
            except sqlite3.Error as e:
                executed.append((s, str(e)))
                self.stats['stmt_err'] += 1
                if not con.in_transaction:
                    rolled = True      # OR ROLLBACK
                    break
                if rng.random() < rollback_on_error_prob:
                    con.execute('ROLLBACK')
                    rolled = True
                    break
        if rolled:
            self.stats['txn_rolledback'] += 1
            after = snapshot(con)
            if after != before or self.maxid() != mx or self.sig(mx) != sig_before:
                self.problems.append(('rollback_left_state', idx, executed))
            return executed, True
        con.execute('COMMIT')
        self.stats['txn_committed'] += 1
        after = snapshot(con)
        rows = con.execute('select id, entity, op, key, rid from groupstore_change where id > ? order by id', (mx,)).fetchall()
        # old rows must not have changed (except pending 5 -> 0)
        if self.sig(mx) != sig_before:
            changed = con.execute('select id, entity, op, key, rid from groupstore_change where id <= ? and id in (%s)'
                                  % ','.join(map(str, pend_before) or ['0']), (mx,)).fetchall()
            changed = [r for r in changed if r[2] not in (5, 0)]
            self.problems.append(('old_change_row_mutated', idx, {'stmts': executed, 'mutated': changed}))
        for r in rows:
            if r[2] == 5:
                self.stats['pending_left'] += 1
        folded, anomalies = fold([(NAME[r[1]], decode_key(NAME[r[1]], r[3], r[4]), r[2])
                                  for r in rows if r[2] in (1, 2, 3)])
        for a in anomalies:
            self.problems.append(('fold_anomaly', idx, {'stmts': executed, 'anomaly': a, 'rows': rows}))
        touched_tables = set()
        for s, _ in executed:
            for t in TABLES:
                if (' %s(' % t) in s or (' %s ' % t) in s or s.endswith(' ' + t):
                    touched_tables.add(t)
        for t in TABLES:
            B, A = before[t], after[t]
            rep = {k: v for k, v in folded.get(t, {}).items() if v not in ('none', 'none0')}
            keys = set(B) | set(A) | set(rep)
            for k in keys:
                if k in A and k not in B: exp = 'ins'
                elif k in B and k not in A: exp = 'del'
                elif k in B and k in A: exp = 'upd' if A[k] != B[k] else 'same'
                else: exp = 'absent'
                got = rep.get(k, 'none')
                if exp == got:
                    continue
                if exp == 'same' and got == 'upd':
                    if t in touched_tables:
                        self.stats['noop_update_reported'] += 1
                        continue
                    cls = 'update_reported_for_untouched_table'
                elif exp == 'same' and got == 'none':
                    continue
                elif exp == 'absent' and got == 'none':
                    continue
                else:
                    cls = 'expected_%s_got_%s' % (exp, got)
                self.problems.append(('%s:%s' % (t, cls), idx,
                                      {'key': k, 'before': B.get(k), 'after': A.get(k), 'stmts': executed,
                                       'rows': rows}))
        return executed, False

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seed', type=int, default=20240611)
    ap.add_argument('--txns', type=int, default=5000)
    ap.add_argument('--no-crowid', action='store_true', help='never use explicit rowid in table c')
    ap.add_argument('--groupstore', default='.build/debug/groupstore', help='the groupstore executable whose triggers are checked')
    ap.add_argument('--db', default=None, help='where the copy under test goes (default: a temporary directory)')
    ap.add_argument('--out', default=None, help='write the history and problems found as JSON here')
    ap.add_argument('--integrity-every', type=int, default=0)
    args = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix='trigger-model-check-')
    BASE = make_base(args.groupstore, scratch)
    base = sqlite3.connect(BASE)
    ENT.update({name: id for id, name in base.execute('SELECT id, name FROM groupstore_table')})
    NAME.update({id: name for name, id in ENT.items()})
    print('trigger_format', base.execute("SELECT value FROM groupstore_meta WHERE key = 'trigger_format'").fetchone()[0])
    base.close()
    if args.db is None: args.db = os.path.join(scratch, 'run.sqlite')
    for sfx in ('', '-wal', '-shm'):
        if os.path.exists(args.db + sfx): os.remove(args.db + sfx)
    shutil.copy(BASE, args.db)
    rng = random.Random(args.seed)
    gen = Gen(rng, crowid=not args.no_crowid)
    ck = Checker(args.db)
    history = []
    for i in range(args.txns):
        stmts = gen.txn()
        # occasionally seed negative rowids
        if rng.random() < 0.05:
            t = rng.choice(['a', 'b', 'e', 'f', 'g'])
            kc = Gen.KEYCOL[t] or 'rowid'     # g: a row whose key is NULL, at a negative rowid
            stmts.insert(0, 'INSERT OR IGNORE INTO %s(%s, v) VALUES (%d, 0)' % (t, kc, rng.choice([-1, -2, 0])))
        # occasionally empty a table to keep things small
        if rng.random() < 0.03:
            stmts.append('DELETE FROM %s' % rng.choice(TABLES))
        try:
            executed, rolled = ck.run_txn(stmts, i, 0.4, rng)
        except sqlite3.DatabaseError as e:
            print('FATAL at txn', i, e, stmts)
            ck.problems.append(('sqlite_fatal_error', i, {'stmts': stmts, 'err': str(e)}))
            break
        history.append({'i': i, 'stmts': executed, 'rolledback': rolled})
        if args.integrity_every and i % args.integrity_every == 0:
            ic = ck.con.execute('pragma integrity_check').fetchall()
            if ic != [('ok',)]:
                print('CORRUPT after txn', i, ic, executed)
                ck.problems.append(('integrity_check_failed', i, {'stmts': executed, 'ic': ic}))
                break
    classes = collections.defaultdict(list)
    for cls, idx, det in ck.problems:
        classes[cls].append(idx)
    print('seed', args.seed, 'txns', args.txns, dict(ck.stats))
    for cls, idxs in sorted(classes.items()):
        print('%-45s %5d  first at txn %d' % (cls, len(idxs), idxs[0]))
    if args.out:
        json.dump({'history': history, 'problems': ck.problems, 'stats': ck.stats, 'seed': args.seed},
                  open(args.out, 'w'), default=repr, indent=0)
    shutil.rmtree(scratch, ignore_errors=True)
    sys.exit(1 if classes else 0)

if __name__ == '__main__':
    main()
