"""State between calls: a per-user counter and per-conversation notes, in both protocol eras.

    toolkit run examples/state_counter.py                     # stdio: you are the one local user
    toolkit run examples/state_counter.py --transport http --store redis://127.0.0.1:6379/0

``count`` keeps a counter per user (the access token's subject; without auth, the one local
user). ``start_conversation`` mints a handle; ``note`` and ``notes`` take it back as their
``session`` argument, which is how a 2026-07-28 client, which has no sessions, keeps a
conversation's state. A 2025-11-25 client may leave ``session`` out: its session is used.
With ``--store`` every replica sees the same state. See docs/state.md.
"""

from __future__ import annotations

from toolkit import Context, LocalUserState, Server, SessionState

server = Server("state-counter")


@server.tool
async def count(state: LocalUserState) -> int:
    """Count your calls to this tool; the count is kept for 30 days after the last one."""
    return await state.incr("calls")


@server.tool
async def start_conversation(ctx: Context) -> str:
    """Start a conversation and get its handle: pass it as `session` to `note` and `notes`.

    A conversation ends after 24 hours unused.
    """
    return await ctx.state.new_session()


@server.tool
async def note(text: str, state: SessionState, session: str | None = None) -> int:
    """Keep a note in the conversation `session` names; how many it holds (the newest 20 are kept)."""
    return await state.append("notes", text, max_items=20)


@server.tool
async def notes(state: SessionState | None, session: str | None = None) -> list[str]:
    """The notes of the conversation `session` names, oldest first (none without a conversation)."""
    if state is None:  # a 2026-07-28 call without a handle: no conversation, so no notes
        return []
    kept: list[str] = await state.get("notes", list[str], [])
    return kept


if __name__ == "__main__":
    server.run()
