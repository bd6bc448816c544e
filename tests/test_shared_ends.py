"""``frames.shared_ends.SharedEnds``: a film's frames shared between this process (from
the front) and its workers (from the back), each handed out exactly once."""

from __future__ import annotations

import multiprocessing
import sys
import threading

import pytest

from nanoframes.frames.shared_ends import SharedEnds


def ends(front: int, back: int) -> SharedEnds:
    shared = SharedEnds(multiprocessing.get_context("spawn"))
    shared.start(front, back)
    return shared


def test_the_front_goes_forwards_the_back_backwards_and_they_meet() -> None:
    shared = ends(0, 10)
    assert [shared.take_front() for _ in range(3)] == [0, 1, 2]
    assert [shared.take_back() for _ in range(3)] == [9, 8, 7]
    rest = list(iter(shared.take_front, None))
    assert rest == [3, 4, 5, 6]
    assert shared.take_back() is None and shared.take_front() is None


def test_start_leaves_what_this_process_took_before_the_pool_was_up() -> None:
    shared = ends(4, 6)  # frames 0-3 were taken before the workers could start
    assert shared.take_back() == 5 and shared.take_front() == 4
    assert shared.take_back() is None


def test_close_stops_both_ends() -> None:
    shared = ends(0, 10)
    assert shared.take_front() == 0
    shared.close()
    assert shared.take_front() is None and shared.take_back() is None


def test_workers_count_what_they_wrote_from_the_start() -> None:
    shared = ends(0, 10)
    for _ in range(3):
        shared.wrote()
    assert shared.written() == 3
    shared.start(0, 5)
    assert shared.written() == 0


def test_every_frame_is_handed_out_once_with_both_ends_taking_at_once() -> None:
    shared = ends(0, 20_000)
    taken: list[list[int]] = [[], [], []]

    def back(out: list[int]) -> None:
        out.extend(iter(shared.take_back, None))

    threads = [threading.Thread(target=back, args=(taken[k],)) for k in (1, 2)]
    for t in threads:
        t.start()
    taken[0].extend(iter(shared.take_front, None))
    for t in threads:
        t.join()
    assert sorted(taken[0] + taken[1] + taken[2]) == list(range(20_000))
    assert taken[0] == sorted(taken[0])  # the front goes forwards
    assert all(t == sorted(t, reverse=True) for t in taken[1:])  # the back, backwards


def _take_front_on_a_thread(shared: SharedEnds
                            ) -> tuple[threading.Thread, list[BaseException | int | None]]:
    """A thread taking the next frame from the front; its outcome (the frame or the
    error) lands in the list."""
    outcome: list[BaseException | int | None] = []

    def take() -> None:
        try:
            outcome.append(shared.take_front())
        except BaseException as exc:  # noqa: BLE001 - the outcome under test
            outcome.append(exc)

    taker = threading.Thread(target=take, daemon=True)
    taker.start()
    return taker, outcome


def _take_the_lock_and_die(shared: SharedEnds) -> None:
    """(in a child process) Killed between taking the lock and releasing it."""
    import os

    shared._cells.get_lock().acquire()
    os._exit(1)


def test_a_lock_left_held_by_a_dead_worker_is_an_error_not_a_hang(monkeypatch) -> None:
    from concurrent.futures.process import BrokenProcessPool

    from nanoframes.frames import shared_ends

    monkeypatch.setattr(shared_ends, "STUCK_S", 0.2)
    monkeypatch.setattr(shared_ends, "AGAIN_S", 0.2)
    ctx = multiprocessing.get_context("spawn")
    shared = SharedEnds(ctx)
    shared.start(0, 10)
    dead = ctx.Process(target=_take_the_lock_and_die, args=(shared,))
    dead.start()
    dead.join(60)
    assert dead.exitcode == 1
    taker, outcome = _take_front_on_a_thread(shared)
    taker.join(30)  # a guard that no longer times out fails here, not by hanging
    assert len(outcome) == 1 and isinstance(outcome[0], BrokenProcessPool)
    assert "stopped while taking a frame" in str(outcome[0])
    shared.close()  # best effort: returns


def _take_the_lock_and_stop(shared: SharedEnds, holding) -> None:
    """(in a child process) Stopped (SIGSTOP) while it holds the lock; lets go as
    soon as it is continued."""
    import os
    import signal

    with shared._cells.get_lock():
        holding.set()
        os.kill(os.getpid(), signal.SIGSTOP)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_stopped_with_the_lock_past_the_deadline_is_waited_for(monkeypatch) -> None:
    """Ctrl-Z stops the command and its workers together; continued later than
    STUCK_S, the command's wait ends with its deadline past just before the
    worker lets go. That is a frame to take, not a dead worker."""
    import os
    import signal
    import time

    from nanoframes.frames import shared_ends

    monkeypatch.setattr(shared_ends, "STUCK_S", 0.2)
    ctx = multiprocessing.get_context("spawn")
    shared = SharedEnds(ctx)
    shared.start(0, 10)
    holding = ctx.Event()
    holder = ctx.Process(target=_take_the_lock_and_stop, args=(shared, holding))
    holder.start()
    try:
        assert holding.wait(60)
        _wait_until_stopped(holder.pid)
        taker, outcome = _take_front_on_a_thread(shared)
        time.sleep(0.4)  # past STUCK_S: the first wait has ended
        os.kill(holder.pid, signal.SIGCONT)
        taker.join(30)
        assert outcome == [0]
    finally:
        os.kill(holder.pid, signal.SIGCONT)
        holder.join(60)
    assert holder.exitcode == 0


def _wait_until_stopped(pid: int) -> None:
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as fh:
            if fh.read().rsplit(")", 1)[1].split()[0] == "T":
                return
        time.sleep(0.01)
    raise AssertionError("the holder never stopped")
