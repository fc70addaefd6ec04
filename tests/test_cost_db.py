"""The persistent cost database: persistence, keys, concurrency, foreign files."""

import multiprocessing
import sqlite3

import pytest

from collage_xdsl.core.boundaries import TransitionCosts
from collage_xdsl.core.cost import Cost
from collage_xdsl.errors import CollageError
from collage_xdsl.measure import cost_db
from collage_xdsl.measure.cost_db import (
    CachedCostEstimator,
    CostDatabase,
    default_path,
    describe_cpu,
    host_description,
    host_fingerprint,
)
from collage_xdsl.measure.estimator import KernelRequest, Measurement, MockCostEstimator


def test_persists_across_instances(tmp_path):
    path = tmp_path / "sub" / "costs.sqlite"
    with CostDatabase(path) as db:
        assert db.get("k1", "tvm", "0.27") is None
        db.put("k1", "tvm", "0.27", Measurement(Cost(1.5e-3), 1e-5, 40))
        db.put("k2", "ort", "1.31", Measurement(Cost.invalid("no conv"), reason="no conv"))
        db.put("k3", "ort", "1.31", Measurement(Cost.unknown()))
        db.put("k1", "tvm", "0.27", Measurement(Cost(1e-3), 2e-5, 50))  # replaces
        assert len(db) == 3
    with CostDatabase(path) as db:
        assert db.get("k1", "tvm", "0.27") == Measurement(Cost(1e-3), 2e-5, 50)
        bad = db.get("k2", "ort", "1.31")
        assert bad.cost.is_invalid and bad.cost.reason == "no conv" and bad.reason == "no conv"
        assert db.get("k3", "ort", "1.31").cost.is_unknown
        assert db.get("k4", "ort", "1.31") is None
        assert db.stats() == {"hits": 3, "misses": 1}
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_version_and_host_are_part_of_the_key(tmp_path):
    path = tmp_path / "costs.sqlite"
    with CostDatabase(path, host="hostA") as db:
        db.put("k", "tvm", "0.27", Measurement(Cost(1.0)))
        db.put("k", "tvm", "0.28", Measurement(Cost(2.0)))
        assert db.get("k", "tvm", "0.27").cost == Cost(1.0)
        assert db.get("k", "tvm", "0.28").cost == Cost(2.0)
        assert db.get("k", "ort", "0.27") is None
    with CostDatabase(path, host="hostB") as db:
        assert db.get("k", "tvm", "0.27") is None
        db.put("k", "tvm", "0.27", Measurement(Cost(3.0)))
        assert len(db) == 3


def test_host_fingerprint_is_stable():
    assert host_fingerprint() == host_fingerprint()
    assert len(host_fingerprint()) == 16
    assert "cores" in host_description()


ZEN3 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC
cache size\t: 512 KB
flags\t\t: fpu sse4_1 sse4_2 avx f16c fma avx2 sha_ni

processor\t: 1
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC
flags\t\t: fpu sse4_1 sse4_2 avx f16c fma avx2 sha_ni avx512f
"""
ZEN4 = ZEN3.replace("model\t\t: 1\n", "model\t\t: 17\n", 1).replace(
    "avx2 sha_ni\n", "avx2 sha_ni avx512f avx512bw avx512_vnni avx512_bf16\n", 1)
GRAVITON = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes sha2 asimddp sve i8mm bf16
CPU implementer\t: 0x41
CPU part\t: 0xd40
"""


def test_hosts_with_one_model_name_but_another_cpu_generation_or_isa_differ():
    # Two VMs that both call their CPU "AMD EPYC": the first processor's generation and
    # vector extensions tell them apart (the second processor's flags are not read).
    assert describe_cpu(ZEN3) == ("AMD EPYC (cpu family 25, model 1, cache size 512 KB; "
                                  "sse4_2 avx avx2 fma f16c)")
    assert describe_cpu(ZEN4) == ("AMD EPYC (cpu family 25, model 17, cache size 512 KB; "
                                  "sse4_2 avx avx2 fma f16c avx512f avx512bw avx512_vnni "
                                  "avx512_bf16)")
    assert describe_cpu(GRAVITON).endswith(
        "(CPU implementer 0x41, CPU part 0xd40; asimd asimddp sve bf16 i8mm)")
    assert describe_cpu("").endswith("(no listed extensions)")


def test_a_database_filled_on_another_cpu_generation_is_not_read(tmp_path, monkeypatch):
    fingerprints = []
    for cpuinfo in (ZEN3, ZEN4):
        monkeypatch.setattr(cost_db, "_cpu", lambda text=cpuinfo: describe_cpu(text))
        fingerprints.append(host_fingerprint())
    assert fingerprints[0] != fingerprints[1]
    path = tmp_path / "costs.sqlite"
    with CostDatabase(path, host=fingerprints[0]) as db:
        db.put("k", "openvino", "2025", Measurement(Cost(1.0)))
    with CostDatabase(path, host=fingerprints[1]) as db:
        assert db.get("k", "openvino", "2025") is None


def test_default_path(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_path() == tmp_path / "collage-xdsl" / "costs.sqlite"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".cache" / "collage-xdsl" / "costs.sqlite"


def _writer(path: str, worker: int, n: int) -> None:
    with CostDatabase(path) as db:
        for i in range(n):
            db.put(f"w{worker}k{i}", "tvm", "1", Measurement(Cost(worker + i / 1000), runs=i))
            db.put("shared", "tvm", "1", Measurement(Cost(float(worker))))


def test_concurrent_writers(tmp_path):
    path = str(tmp_path / "costs.sqlite")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 50)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with CostDatabase(path) as db:
        assert len(db) == 4 * 50 + 1
        for w in range(4):
            for i in range(50):
                m = db.get(f"w{w}k{i}", "tvm", "1")
                assert m.cost.seconds == pytest.approx(w + i / 1000) and m.runs == i
        assert db.get("shared", "tvm", "1").cost.seconds in {0.0, 1.0, 2.0, 3.0}


def test_a_database_locked_too_long_is_reported(tmp_path, monkeypatch):
    path = tmp_path / "costs.sqlite"
    CostDatabase(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode = DELETE")  # in WAL a writer never blocks opening
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(cost_db, "BUSY_TIMEOUT_S", 0.2)
    with pytest.raises(CollageError, match="another process kept it locked for 0.2 s"):
        CostDatabase(path)
    holder.execute("COMMIT")
    holder.close()
    with CostDatabase(path) as db:  # nothing was lost
        assert len(db) == 0


def test_a_database_that_cannot_use_wal_keeps_its_journal_mode():
    # SQLite answers a WAL switch it cannot make with the mode it keeps, not an error
    # (an in-memory database: "memory"); opening must not wait for WAL forever
    with CostDatabase(":memory:") as db:
        db.put("k", "tvm", "1", Measurement(Cost(1.0)))
        assert db.get("k", "tvm", "1").cost == Cost(1.0)


def test_garbage_file_is_reported_and_kept(tmp_path):
    path = tmp_path / "costs.sqlite"
    garbage = b"this is not a database at all\x00\x01\x02" * 200
    path.write_bytes(garbage)
    with pytest.raises(CollageError) as err:
        CostDatabase(path)
    message = str(err.value)
    assert str(path) in message and "not a usable SQLite database" in message
    assert "left untouched" in message
    assert path.read_bytes() == garbage


def test_foreign_sqlite_file_is_reported_and_kept(tmp_path):
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE songs (title TEXT)")
    conn.execute("INSERT INTO songs VALUES ('x')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(CollageError, match="another application .*songs"):
        CostDatabase(path)
    assert path.read_bytes() == before
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_other_schema_version_is_reported(tmp_path):
    path = tmp_path / "costs.sqlite"
    CostDatabase(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE collage_meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(CollageError, match="schema version '99', but .* uses '2'"):
        CostDatabase(path)


def test_a_version_1_database_is_upgraded_in_place_keeping_its_costs(tmp_path):
    path = tmp_path / "costs.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE collage_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE collage_costs (
            kernel TEXT NOT NULL, backend TEXT NOT NULL, version TEXT NOT NULL,
            host TEXT NOT NULL, cost REAL, spread REAL NOT NULL, runs INTEGER NOT NULL,
            reason TEXT NOT NULL, timestamp REAL NOT NULL,
            PRIMARY KEY (kernel, backend, version, host));
        INSERT INTO collage_meta VALUES ('schema_version', '1');
        INSERT INTO collage_costs VALUES ('k', 'tvm', '1', 'h', 2.5, 0.1, 40, '', 0.0);
    """)
    conn.close()
    with CostDatabase(path, host="h") as db:
        assert db.get("k", "tvm", "1") == Measurement(Cost(2.5), 0.1, 40)
        db.put("k2", "tvm", "1", Measurement(Cost(1.0), sequence=3e-5))
        assert db.get("k2", "tvm", "1").sequence == 3e-5
    with CostDatabase(path, host="h") as db:  # opened again: version 2 now
        assert db.get("k", "tvm", "1").cost == Cost(2.5)


def test_unopenable_path_is_reported(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(CollageError, match="cannot open"):
        CostDatabase(blocker / "costs.sqlite")


@pytest.mark.parametrize("path", ["/dev/null", "."])
def test_a_path_that_is_no_regular_file_is_reported(path):
    with pytest.raises(CollageError, match=f"cost database {path}: not a regular file"):
        CostDatabase(path)


def _corrupted(path, sql: str, *params) -> bytes:
    """Apply ``sql`` to the database at ``path`` as another program would; its bytes."""
    conn = sqlite3.connect(path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize("sql, reason", [
    ("cost = 'abc'", "cost 'abc' is not a number >= 0 or NULL"),
    ("cost = -1.0", "cost -1.0 is not a number >= 0 or NULL"),
    ("cost = -9e999", "cost -inf is not"),
    ("spread = -1.0", "spread -1.0 is not a finite number >= 0"),
    ("spread = 9e999", "spread inf is not a finite number >= 0"),
    ("runs = 2.5", "runs 2.5 is not an integer >= 0"),
    ("runs = -3", "runs -3 is not an integer >= 0"),
    ("reason = x'00ff'", "reason b'\\x00\\xff' is not text"),
    ("sequence = 'x'", "sequence 'x' is not a finite number"),
    ("sequence = 9e999", "sequence inf is not a finite number"),
])
def test_a_corrupt_row_is_reported_and_kept(tmp_path, sql, reason):
    path = tmp_path / "costs.sqlite"
    with CostDatabase(path) as db:
        db.put("k", "tvm", "1", Measurement(Cost(1e-3), 1e-5, 40, sequence=-2e-3))
        assert db.get("k", "tvm", "1").sequence == -2e-3  # a sequence cost may be negative
    before = _corrupted(path, f"UPDATE collage_costs SET {sql}")
    with CostDatabase(path) as db, pytest.raises(CollageError) as err:
        db.get("k", "tvm", "1")
    assert f"cost database {path}: corrupt row for kernel k on tvm: {reason}" in str(err.value)
    assert path.read_bytes() == before


@pytest.mark.parametrize("costs, reason", [
    ("not json", "JSONDecodeError: Expecting value"),
    ('{"base": "abc", "launch": {}, "crossing": []}',
     "ValueError: base 'abc' is not a finite number >= 0"),
    ('{"base": NaN, "launch": {}, "crossing": []}', "ValueError: base nan is not"),
    ('{"base": -1.0, "launch": {}, "crossing": []}', "ValueError: base -1.0 is not"),
    ('{"base": 0, "launch": {"tvm": -1.0}, "crossing": []}', "ValueError: launch tvm -1.0 is not"),
    ('{"base": 0, "launch": {}, "crossing": [["a", "b", Infinity, 0]]}',
     "ValueError: crossing a>b inf is not a finite number"),
    ('{"base": 1e-6}', "KeyError: 'launch'"),
    ("[]", "TypeError"),
    ('{"base": 0, "launch": {}, "crossing": 5}', "TypeError"),
    ('{"base": 0, "launch": [], "crossing": []}', "AttributeError"),
])
def test_corrupt_transition_costs_are_reported_and_kept(tmp_path, costs, reason):
    path = tmp_path / "costs.sqlite"
    calibrated = TransitionCosts(1e-6, {"tvm": 2e-6}, {("tvm", "ort"): (3e-6, 1e-12)})
    with CostDatabase(path) as db:
        db.put_transitions("key", calibrated.to_json())
        assert db.get_transitions("key") == calibrated
    before = _corrupted(path, "UPDATE collage_transitions SET costs = ?", costs)
    with CostDatabase(path) as db, pytest.raises(CollageError) as err:
        db.get_transitions("key")
    assert f"cost database {path}: corrupt transition costs ({reason}" in str(err.value)
    assert path.read_bytes() == before


@pytest.mark.parametrize("sql, reason", [
    ("DROP TABLE collage_costs; CREATE TABLE collage_costs (a int)",
     "table collage_costs lacks column backend"),
    ("CREATE TABLE collage_transitions (a int)", "table collage_transitions lacks column costs"),
    ("DROP TABLE collage_meta; CREATE TABLE collage_meta (a int)",
     "table collage_meta lacks column key"),
    ("ALTER TABLE collage_costs DROP COLUMN sequence", "table collage_costs lacks column sequence"),
    ("UPDATE collage_meta SET value = '1'; ALTER TABLE collage_costs DROP COLUMN runs",
     "table collage_costs lacks column runs"),  # reported before the upgrade to version 2
])
def test_tables_of_our_names_with_other_columns_are_reported_and_kept(tmp_path, sql, reason):
    path = tmp_path / "costs.sqlite"
    with CostDatabase(path) as db:
        db.put("k", "tvm", "1", Measurement(Cost(1.0)))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.executescript(sql)
    conn.close()
    before = path.read_bytes()
    with pytest.raises(CollageError) as err:
        CostDatabase(path)
    assert f"cost database {path}: not a collage cost database ({reason})" in str(err.value)
    assert path.read_bytes() == before
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "delete"


class CountingEstimator(MockCostEstimator):
    def __init__(self):
        super().__init__({"tvm": 1.0, "ort": 2.0})
        self.calls = 0

    def _measure(self, request):
        self.calls += 1
        return super()._measure(request)


def _model_requests() -> list[KernelRequest]:
    # a "model" whose candidates repeat structurally (same key): costed once per backend
    keys = ["conv", "relu", "conv", "add", "relu", "conv"]
    return [KernelRequest(b, k, 1 + len(k) % 3, lambda: None) for k in keys for b in ("tvm", "ort")]


def test_second_run_measures_nothing(tmp_path):
    path = tmp_path / "costs.sqlite"
    versions = {"tvm": "0.27", "ort": "1.31"}
    versions = lambda r, v=versions: v[r.backend]  # noqa: E731
    inner = CountingEstimator()
    with CostDatabase(path) as db:
        first = CachedCostEstimator(inner, db, versions).estimate_all(_model_requests())
        assert inner.calls == 6  # 3 distinct kernels x 2 backends
        assert db.stats() == {"hits": 0, "misses": 6}
    inner2 = CountingEstimator()
    with CostDatabase(path) as db:
        second = CachedCostEstimator(inner2, db, versions).estimate_all(_model_requests())
        assert inner2.calls == 0
        assert db.stats() == {"hits": 6, "misses": 0}
    assert first == second
    # a new backend version is a different key: measured again
    inner3 = CountingEstimator()
    with CostDatabase(path) as db:
        CachedCostEstimator(inner3, db, lambda r: {"tvm": "0.28", "ort": "1.31"}[r.backend]
                            ).estimate_all(_model_requests())
    assert inner3.calls == 3
