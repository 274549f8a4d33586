"""fio's answers cached across runs: trusted only for the same binary, and engine verdicts only for the same boot."""

import json
import os
import shutil

import pytest

from disklab.fio.features import choose_engine, detect_fio, engine_works

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")


@pytest.fixture
def fio(tmp_path):
    """A fio binary of the test's own, so that it can be 'upgraded' (touched) without touching the system's."""
    copy = tmp_path / "bin" / "fio"
    copy.parent.mkdir()
    shutil.copy2(shutil.which("fio"), copy)
    return str(copy)


def edit(cache, fio, **changes):
    entries = json.loads(cache.read_text())
    entries[fio].update(changes)
    cache.write_text(json.dumps(entries))


def test_the_second_detection_reads_the_cache(tmp_path, fio):
    cache = tmp_path / "home" / "fio-features.json"
    first = detect_fio(fio, cache)
    assert json.loads(cache.read_text())[fio]["version_text"] == first.version_text
    edit(cache, fio, version_text="fio-3.99")  # what only the cache says
    assert detect_fio(fio, cache).version_text == "fio-3.99"


def test_another_binary_at_the_same_path_is_asked_again(tmp_path, fio):
    cache = tmp_path / "fio-features.json"
    real = detect_fio(fio, cache).version_text
    edit(cache, fio, version_text="fio-3.99")
    os.utime(fio, ns=(1, 1))  # a new build installed over it
    assert detect_fio(fio, cache).version_text == real


def test_engine_verdicts_hold_for_this_boot_only(tmp_path, fio):
    cache = tmp_path / "fio-features.json"
    assert engine_works(detect_fio(fio, cache), "psync")
    assert json.loads(cache.read_text())[fio]["works"] == {"psync": True}
    edit(cache, fio, works={"psync": False})
    assert not engine_works(detect_fio(fio, cache), "psync")  # trusted: no probe this boot
    edit(cache, fio, kernel="another boot")
    assert engine_works(detect_fio(fio, cache), "psync")  # probed again after a reboot


def test_auto_probes_in_order_and_remembers_each_verdict(tmp_path, fio):
    cache = tmp_path / "fio-features.json"
    engine = choose_engine(detect_fio(fio, cache))
    works = json.loads(cache.read_text())[fio]["works"]
    assert works[engine] is True and all(not ok for name, ok in works.items() if name != engine)
    assert choose_engine(detect_fio(fio, cache)) == engine


@pytest.mark.parametrize("content", [b"\xff\xfe not json", b"[1, 2]", b'{"x": 1}', None])
def test_a_cache_that_cannot_be_trusted_is_asked_again_and_rewritten(tmp_path, fio, content):
    cache = tmp_path / "fio-features.json"
    if content is None:  # the right keys with the wrong types
        detect_fio(fio, cache)
        edit(cache, fio, engines="psync", works={"psync": "yes"})
    else:
        cache.write_bytes(content)
    info = detect_fio(fio, cache)
    assert "psync" in info.engines and info.works == {}
    assert json.loads(cache.read_text())[fio]["engines"] == sorted(info.engines)


def test_an_unwritable_cache_only_means_asking_fio_each_time(tmp_path, fio):
    (tmp_path / "not-a-folder").write_text("")
    cache = tmp_path / "not-a-folder" / "fio-features.json"  # cannot be made, not even by root
    assert engine_works(detect_fio(fio, cache), "psync")
    assert engine_works(detect_fio(fio, cache), "psync")


def test_without_a_cache_nothing_is_written(tmp_path, fio):
    assert engine_works(detect_fio(fio), "psync")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["bin", "fio"]
