"""Cheat: answers the check with a 40 MB reply of nested empty lists written straight to the protocol (it grew the checking process by 1.4 GB)."""

import os


def _flood():
    from course.engine import child

    item = b'{"l":[]},'
    body = b'{"value":{"l":[' + item * (40_000_000 // len(item)) + b'{"l":[]}]}}'
    child.write_frame(child._PROTOCOL[1], body)
    os._exit(0)


def clip_by_norm(g, max_norm):
    _flood()


def huber_loss(pred, target, delta):
    _flood()
