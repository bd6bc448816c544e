"""``frames.runs.TwoEnded``: frames shared between this process (from the front)
and its workers (runs from the back), each handed out exactly once."""

from __future__ import annotations

import threading

from nanoframes.frames.runs import MAX_RUN, TwoEnded


def test_runs_from_the_back_shrink_with_what_is_left_and_meet_the_front() -> None:
    shared = TwoEnded(range(100), processes=2)
    first = shared.take_back()
    assert first == list(range(88, 100))  # an eighth of what is left (2 processes)
    front = shared.front()
    assert [next(front) for _ in range(10)] == list(range(10))
    sizes = []
    while run := shared.take_back():
        assert run == sorted(run) and len(run) <= MAX_RUN
        sizes.append(len(run))
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] == 1
    assert list(front) == []  # the back took everything after the front


def test_a_long_film_is_taken_in_runs_of_at_most_max_run() -> None:
    shared = TwoEnded(range(10_000), processes=2)
    assert len(shared.take_back()) == MAX_RUN


def test_close_stops_both_ends() -> None:
    shared = TwoEnded(range(10), processes=2)
    front = shared.front()
    assert next(front) == 0
    shared.close()
    assert list(front) == [] and shared.take_back() == []


def test_every_item_is_handed_out_once_with_both_ends_taking_at_once() -> None:
    shared = TwoEnded(range(20_000), processes=3)
    taken: list[list[int]] = [[], [], []]

    def back(out: list[int]) -> None:
        while run := shared.take_back():
            out.extend(run)

    threads = [threading.Thread(target=back, args=(taken[k],)) for k in (1, 2)]
    for t in threads:
        t.start()
    taken[0].extend(shared.front())
    for t in threads:
        t.join()
    everything = sorted(taken[0] + taken[1] + taken[2])
    assert everything == list(range(20_000))
    assert taken[0] == sorted(taken[0])  # the front goes forwards
