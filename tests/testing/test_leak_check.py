"""The pytest plugin's leak check: a test that leaves a thread or a child process running fails, by name."""

from __future__ import annotations

import subprocess
import threading

import pytest

from componentbase.testing import pytest_plugin

pytestmark = pytest.mark.process

INNER = '''
import subprocess, sys, threading
import pytest

def test_leaks_a_thread(release):
    threading.Thread(target=release.wait, args=(30,), name="forgotten-worker").start()

def test_leaks_a_child(spawned):
    spawned.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]))

def test_stops_what_it_started():
    t = threading.Thread(target=lambda: None)
    t.start()
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_a_daemon_thread_is_not_a_leak(release):
    threading.Thread(target=release.wait, args=(30,), daemon=True).start()

@pytest.mark.allow_leaks
def test_allowed(release):
    threading.Thread(target=release.wait, args=(30,)).start()
'''


class Leaks:
    """A plugin for the inner run: what its tests leave behind, for the outer test to end afterwards."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.children: list[subprocess.Popen[bytes]] = []

    @pytest.fixture
    def release(self) -> threading.Event:
        return self.event

    @pytest.fixture
    def spawned(self) -> list[subprocess.Popen[bytes]]:
        return self.children

    def run(self, pytester: pytest.Pytester) -> pytest.RunResult:
        try:
            return pytester.runpytest_inprocess("-p", "no:cacheprovider", plugins=[self])
        finally:
            self.event.set()
            for child in self.children:
                child.kill()
                child.wait(10)


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setattr(pytest_plugin, "LEAK_GRACE_SECONDS", 0.3)
    pytester.makepyfile(test_inner=INNER)
    return pytester


def test_leaked_threads_and_children_fail_the_test_that_left_them(inner: pytest.Pytester) -> None:
    inner.makeini("[pytest]\ncomponentbase_leak_check = true\n")
    result = Leaks().run(inner)
    result.assert_outcomes(passed=5, errors=2)
    text = result.stdout.str()
    assert "test_leaks_a_thread left running: thread 'forgotten-worker'" in text
    assert "test_leaks_a_child left running: child process" in text and "time.sleep(30)" in text


def test_off_unless_the_ini_turns_it_on(inner: pytest.Pytester) -> None:
    Leaks().run(inner).assert_outcomes(passed=5)
