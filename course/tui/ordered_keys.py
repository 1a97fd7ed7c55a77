"""Keys are handled one after another, each after the effects of the one before.

Textual's App hands each key to whatever has the focus at the moment it reads the key,
and the widget gets it through its own message queue; the effects often land in yet
other queues. A character typed into the editor is inserted by the editor, but a bound
key (Shift+End, Ctrl+A, the app's Ctrl+G) bubbles up from the editor through its parents
to the App, which runs the binding then: text typed right after Shift+End reached the
editor first and was inserted before the selection was made. Ctrl+G opens the go-to-line
box, whose field takes the focus only once it is mounted, and the cursor moves when the
exercise screen runs the box's answer: digits typed fast went to a box with no field yet,
and text went to the old line. Keys come that fast from a fast typist, a paste, or a
machine too busy to keep up.

Here the App keeps keys (and pastes) in a line of its own and releases the next one only
when the screen and its widgets have handled every message queued after the one before,
so a key always meets the focus and the cursor its predecessors left. Keys typed into the
editor go on at once, one after another (they share its queue); a key that a binding may
take waits until what was typed before it is in the buffer, and the keys after it wait for
its effects. A key typed at human speed is released at once.
"""

from __future__ import annotations

import asyncio
from collections import deque

from textual import events

# Not a timing assumption: a bound, so that a screen that never goes quiet cannot hold keys for ever.
SETTLE_LIMIT_S = 5.0
MAX_ROUNDS = 20
RELEASED = "_jaxlings_released"  # set on a key handed back to the App to be handled now


class OrderedKeys:
    """Mixed into the App (before `App` in the bases)."""

    def _ordered_state(self) -> tuple[deque, dict]:
        backlog = self.__dict__.get("_key_backlog")
        if backlog is None:
            backlog = self.__dict__["_key_backlog"] = deque()
            self.__dict__["_key_pump"] = {"task": None, "released": 0}
        return backlog, self.__dict__["_key_pump"]

    def keys_pending(self) -> bool:
        """Keys read but not yet handed out, or whose effects are still being waited for."""
        backlog, pump = self._ordered_state()
        return bool(backlog) or (pump["task"] is not None and not pump["task"].done())

    def keys_released(self) -> int:
        """How many keys and pastes have been handed out so far (the tests count them)."""
        return self._ordered_state()[1]["released"]

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            backlog, pump = self._ordered_state()
            if not getattr(event, RELEASED, False):
                backlog.append(event)
                task = pump["task"]
                if task is None or task.done():
                    pump["task"] = asyncio.create_task(self._release_keys())
                return
        await super().on_event(event)  # type: ignore[misc]

    async def _release_keys(self) -> None:
        backlog, pump = self._ordered_state()
        typing = False  # the keys released since the last wait were all typed into the editor
        while backlog and self.is_running:  # type: ignore[attr-defined]
            event = backlog[0]
            in_place = self._handled_in_place(event)
            if not in_place and typing:
                # What was typed is in the buffer before a save reads it or a jump moves the cursor.
                await self._settle()
            backlog.popleft()
            setattr(event, RELEASED, True)
            pump["released"] += 1
            self.post_message(event)  # type: ignore[attr-defined]
            typing = in_place
            if not in_place:
                await self._settle()

    def _handled_in_place(self, event: events.Event) -> bool:
        """A key (or paste) that the focused text area handles itself, in its own queue: a
        character typed, Enter, Tab. The next such key goes to the same queue behind it, so it
        needs no wait. A key that any binding may take is not one of them."""
        from textual.widgets import TextArea

        focused = self.focused  # type: ignore[attr-defined]
        if not isinstance(focused, TextArea):
            return False
        if isinstance(event, events.Paste):
            return True
        keys = {event.key, *getattr(event, "aliases", ())}
        # The text area's own bindings too (Shift+End, Ctrl+A): a bound key is not handled in its
        # queue but bubbles up to the App, which runs the binding later, after keys typed behind it.
        return not any(bindings.key_to_bindings.get(key) for key in keys
                       for _node, bindings in self.screen._modal_binding_chain)  # type: ignore[attr-defined]

    async def _settle(self) -> None:
        try:
            await asyncio.wait_for(self._settled(), SETTLE_LIMIT_S)
        except asyncio.TimeoutError:
            pass

    async def _settled(self) -> None:
        """Return once the App, every screen on the stack and their widgets have handled what
        the last key set off: round after round (a message posted to a parent, a box's answer
        sent to the screen below it), until a round leaves no message waiting anywhere."""
        from textual.app import ScreenStackError

        for _round in range(MAX_ROUNDS):
            try:
                pumps = [self, *(w for screen in self.screen_stack  # type: ignore[attr-defined]
                                 for w in screen.walk_children(with_self=True))]
            except ScreenStackError:
                return  # the app is closing: nothing left to wait for
            done = [asyncio.Event() for _ in pumps]
            waiting = [flag for pump, flag in zip(pumps, done) if pump.call_later(flag.set)]
            for flag in waiting:
                await flag.wait()
            if not any(pump.message_queue_size or pump._next_callbacks for pump in pumps):
                return
