"""``RedisTaskStore``: tasks in Redis, so any replica answers for a task another one runs.

Keys (under the store's prefix):

- ``t:<task>``: a hash per task, expiring ``ttl_ms`` after its creation: ``rec`` (the fields
  that never change, JSON), ``st`` status, ``sm`` status message, ``pi`` poll interval, ``up``
  last update, ``res`` result, ``err`` error (each JSON), ``i:<key>`` one field per question
  outstanding, ``a:<key>`` one per answer a client sent that the running replica has not taken;
- ``to:<owner>``: the tasks of one creator by creation time (2025-11-25 ``tasks/list``).

The result, error and questions are kept as the JSON the replica wrote: the scripts below
read statuses and keys only, and never re-encode a value (Lua's JSON would round numbers).
"""

from __future__ import annotations

import json
import time
from contextlib import AbstractContextManager
from typing import Any, Final, Protocol

from .tasks import TERMINAL, TaskRecord, TaskStore, check_changes


class Keyspace(Protocol):
    """What the task store uses of a ``RedisStore``: its client, its key prefix, its error guard."""

    client: Any

    def key(self, *parts: str) -> str: ...

    def guard(self) -> AbstractContextManager[None]: ...


_TERMINAL_LUA: Final = " or ".join(f"st == '{status}'" for status in sorted(TERMINAL))

_ENDED: Final = f"""
local function ended(st) return {_TERMINAL_LUA} end
local function drop(prefix)
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(field, 1, 2) == prefix then redis.call('HDEL', KEYS[1], field) end
  end
end
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return nil end
"""
# Change a task unless it has ended; ending it drops its questions and answers. The hash as it now is.
_UPDATE: Final = (
    _ENDED
    + """
if not ended(st) then
  redis.call('HSET', KEYS[1], unpack(ARGV))
  if ended(redis.call('HGET', KEYS[1], 'st')) then drop('i:') drop('a:') end
end
return redis.call('HGETALL', KEYS[1])
"""
)
# Add a question (ARGV: key, request, now); the task waits for input.
_ASK: Final = (
    _ENDED
    + """
if not ended(st) then
  redis.call('HSET', KEYS[1], 'i:' .. ARGV[1], ARGV[2], 'st', 'input_required', 'up', ARGV[3])
end
return redis.call('HGETALL', KEYS[1])
"""
)
# Answers (ARGV: now, then key, answer pairs): each outstanding question answered moves to a:<key>;
# with none left the task works again.
_ANSWER: Final = (
    _ENDED
    + """
if not ended(st) then
  for i = 2, #ARGV, 2 do
    if redis.call('HDEL', KEYS[1], 'i:' .. ARGV[i]) == 1 then
      redis.call('HSET', KEYS[1], 'a:' .. ARGV[i], ARGV[i + 1])
    end
  end
  local left = false
  for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
    if string.sub(field, 1, 2) == 'i:' then left = true break end
  end
  if st == 'input_required' and not left then redis.call('HSET', KEYS[1], 'st', 'working', 'sm', 'null') end
  redis.call('HSET', KEYS[1], 'up', ARGV[1])
end
return redis.call('HGETALL', KEYS[1])
"""
)
# Take (and remove) the answers kept for a task.
_TAKE: Final = """
local all = redis.call('HGETALL', KEYS[1])
local taken = {}
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 2) == 'a:' then
    taken[#taken + 1] = string.sub(all[i], 3)
    taken[#taken + 1] = all[i + 1]
    redis.call('HDEL', KEYS[1], all[i])
  end
end
return taken
"""

_FIELD: Final = {"status": "st", "status_message": "sm", "result": "res", "error": "err", "poll_interval_ms": "pi"}


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class RedisTaskStore(TaskStore):
    """The tasks of every replica of one ``RedisStore``."""

    def __init__(self, store: Keyspace) -> None:
        self.store = store
        client = store.client
        self._update = client.register_script(_UPDATE)
        self._ask = client.register_script(_ASK)
        self._answer = client.register_script(_ANSWER)
        self._take = client.register_script(_TAKE)

    def _key(self, task_id: str) -> str:
        return self.store.key("t", task_id)

    def _index(self, owner: str | None) -> str:
        return self.store.key("to", owner if owner is not None else "")

    async def create_task(self, record: TaskRecord) -> None:
        fixed = {
            name: getattr(record, name)
            for name in ("id", "owner", "modern", "version", "tool", "ttl_ms", "replica", "created_at")
        }
        fields = {
            "rec": _dump(fixed),
            "st": record.status,
            "sm": _dump(record.status_message),
            "pi": str(record.poll_interval_ms),
            "up": repr(record.updated_at),
            "res": _dump(record.result),
            "err": _dump(record.error),
        }
        fields.update({f"i:{key}": _dump(request) for key, request in record.input_requests.items()})
        key = self._key(record.id)
        with self.store.guard():
            async with self.store.client.pipeline(transaction=True) as pipe:
                pipe.hset(key, mapping=fields)
                pipe.pexpire(key, record.ttl_ms)
                if not record.modern:  # only 2025-11-25 lists tasks
                    index = self._index(record.owner)
                    pipe.zadd(index, {record.id: record.created_at})
                    pipe.pexpire(index, record.ttl_ms, gt=True)
                    pipe.pexpire(index, record.ttl_ms, nx=True)
                await pipe.execute()

    async def get_task(self, task_id: str) -> TaskRecord | None:
        with self.store.guard():
            found = await self.store.client.hgetall(self._key(task_id))
        return _record(found) if found else None

    async def update_task(self, task_id: str, **changes: Any) -> TaskRecord | None:
        check_changes(changes)
        args: list[str] = ["up", repr(time.time())]
        for name, value in changes.items():
            args += [
                _FIELD[name],
                value if name == "status" else str(value) if name == "poll_interval_ms" else _dump(value),
            ]
        with self.store.guard():
            found = await self._update(keys=[self._key(task_id)], args=args)
        return _record(_pairs(found)) if found else None

    async def ask(self, task_id: str, key: str, request: dict[str, Any]) -> TaskRecord | None:
        with self.store.guard():
            found = await self._ask(keys=[self._key(task_id)], args=[key, _dump(request), repr(time.time())])
        return _record(_pairs(found)) if found else None

    async def answer_task(self, task_id: str, responses: dict[str, Any]) -> TaskRecord | None:
        args: list[str] = [repr(time.time())]
        for key, answer in responses.items():
            args += [str(key), _dump(answer)]
        with self.store.guard():
            found = await self._answer(keys=[self._key(task_id)], args=args)
        return _record(_pairs(found)) if found else None

    async def take_answers(self, task_id: str) -> dict[str, Any]:
        with self.store.guard():
            taken = await self._take(keys=[self._key(task_id)])
        pairs = _pairs(taken or [])
        return {key.decode(): json.loads(value) for key, value in pairs.items()}

    async def list_tasks(self, owner: str | None) -> list[TaskRecord]:
        index = self._index(owner)
        client = self.store.client
        with self.store.guard():
            ids = [task_id.decode() for task_id in await client.zrange(index, 0, -1)]
            if not ids:
                return []
            async with client.pipeline(transaction=False) as pipe:
                for task_id in ids:
                    pipe.hgetall(self._key(task_id))
                found = await pipe.execute()
            gone = [task_id for task_id, fields in zip(ids, found, strict=True) if not fields]
            if gone:
                await client.zrem(index, *gone)
        records = [_record(fields) for fields in found if fields]
        return [record for record in records if not record.modern and record.owner == owner]


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def _record(found: dict[bytes, bytes]) -> TaskRecord:
    fixed = json.loads(found[b"rec"])
    record = TaskRecord(
        **fixed,
        poll_interval_ms=int(found[b"pi"]),
        status=found[b"st"].decode(),
        status_message=json.loads(found[b"sm"]),
        updated_at=float(found[b"up"]),
        result=json.loads(found[b"res"]),
        error=json.loads(found[b"err"]),
        input_requests={key[2:].decode(): json.loads(value) for key, value in found.items() if key.startswith(b"i:")},
    )
    record.answers = {key[2:].decode(): json.loads(value) for key, value in found.items() if key.startswith(b"a:")}
    return record
