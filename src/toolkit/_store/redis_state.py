"""``RedisStateStore``: per-user and per-session state in Redis, shared by every replica.

Keys (under the store's prefix):

- ``st:{<scope>}``: a hash per scope, ``v:<name>`` the value's JSON text and ``e:<name>`` its
  expiry (milliseconds of Redis's clock); the hash itself expires with its longest-lived value.
  A value past its expiry is gone for every reader at once, and removed by the next write;
- ``sh:<handle>``: a session handle, ``<idle ms>:<owner>`` (no owner: anyone holding it), expiring
  after its idle time.

Every write is one Lua script, so the bounds of a scope (``StateLimits``) are checked against
what it holds at that instant and a conditional write (``expect=``) or an ``incr`` never loses a
concurrent change. The scripts measure and compare texts and never decode a value (Lua's JSON
would round numbers); ``incr`` reads an integer with ``tonumber``, exact within ±2**53. The scope
in braces is a Redis Cluster hash tag: a scope's keys share a slot.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from .redis_tasks import Keyspace
from .state import ANY, MAX_EXACT, StateError, StateLimitError, StateLimits, StateStore, _Any, check_ttl, not_an_integer

_NOW: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""
# The scope's live values (expired ones removed), their total size and count.
_LIVE: Final = (
    _NOW
    + """
local all = redis.call('HGETALL', KEYS[1])
local values, expired = {}, {}
for i = 1, #all, 2 do
  local kind, n = string.sub(all[i], 1, 2), string.sub(all[i], 3)
  if kind == 'e:' and tonumber(all[i + 1]) <= now then expired[n] = true
  elseif kind == 'v:' then values[n] = all[i + 1] end
end
local total, count = 0, 0
for n, text in pairs(values) do
  if expired[n] then
    redis.call('HDEL', KEYS[1], 'v:' .. n, 'e:' .. n)
    values[n] = nil
  else
    total = total + #text
    count = count + 1
  end
end
"""
)
# Write ARGV[2] as ARGV[1]'s value for ARGV[3] ms if it fits the limits (ARGV[4..6]); {1} done,
# {-1|-2|-3, size} a limit (value bytes, scope bytes, names).
_WRITE: Final = """
local function write(name, text, ttl)
  local current = values[name]
  local size = #text
  if size > tonumber(ARGV[4]) then return {-1, size} end
  local after = total - (current and #current or 0) + size
  if after > tonumber(ARGV[5]) then return {-2, after} end
  if not current and count + 1 > tonumber(ARGV[6]) then return {-3, count + 1} end
  redis.call('HSET', KEYS[1], 'v:' .. name, text, 'e:' .. name, string.format('%d', now + ttl))
  if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
  return {1}
end
"""
# ARGV: name, text, ttl ms, limits (3), expect mode ('any' | 'absent' | 'equal'), expected text.
_PUT: Final = (
    _LIVE
    + _WRITE
    + """
local current = values[ARGV[1]]
if ARGV[7] == 'absent' and current then return {0} end
if ARGV[7] == 'equal' and current ~= ARGV[8] then return {0} end
return write(ARGV[1], ARGV[2], tonumber(ARGV[3]))
"""
)
# ARGV: name, amount, ttl ms, limits (3). {1, new text}; {-4, held} not an integer; {-5} past 2**53.
_INCR: Final = (
    _LIVE
    + _WRITE
    + f"""
local current = values[ARGV[1]]
local n = 0
if current then
  if not string.match(current, '^%-?%d+$') then return {{-4, current}} end
  n = tonumber(current)
  if math.abs(n) >= {MAX_EXACT} then return {{-4, current}} end
end
n = n + tonumber(ARGV[2])
if math.abs(n) >= {MAX_EXACT} then return {{-5}} end
local text = string.format('%d', n)
local done = write(ARGV[1], text, tonumber(ARGV[3]))
if done[1] ~= 1 then return done end
return {{1, text}}
"""
)
_GET: Final = (
    _NOW
    + """
local e = redis.call('HGET', KEYS[1], 'e:' .. ARGV[1])
if not e then return false end
if tonumber(e) <= now then
  redis.call('HDEL', KEYS[1], 'v:' .. ARGV[1], 'e:' .. ARGV[1])
  return false
end
return redis.call('HGET', KEYS[1], 'v:' .. ARGV[1])
"""
)
_DELETE: Final = (
    _NOW
    + """
local e = redis.call('HGET', KEYS[1], 'e:' .. ARGV[1])
redis.call('HDEL', KEYS[1], 'v:' .. ARGV[1], 'e:' .. ARGV[1])
if e and tonumber(e) > now then return 1 end
return 0
"""
)
_NAMES: Final = (
    _LIVE
    + """
local names = {}
for n, _ in pairs(values) do names[#names + 1] = n end
return names
"""
)
# A handle's record is "<idle ms>:<owner>"; opening it pushes its expiry back by its idle time.
_OPEN: Final = """
local found = redis.call('GET', KEYS[1])
if not found then return false end
redis.call('PEXPIRE', KEYS[1], string.match(found, '^(%d+):'))
return found
"""
_BOUNDS: Final = ("max_value_bytes", "max_scope_bytes", "max_names")


class StateKeyspace(Keyspace, Protocol):
    """A ``Keyspace`` that also names a state scope's key (``RedisStore.state_key``)."""

    def state_key(self, scope: str) -> str: ...


class RedisStateStore(StateStore):
    """The state of every replica of one ``RedisStore``."""

    def __init__(self, store: StateKeyspace, limits: StateLimits | None = None) -> None:
        super().__init__(limits)
        self.store = store
        client = store.client
        self._put = client.register_script(_PUT)
        self._incr = client.register_script(_INCR)
        self._get = client.register_script(_GET)
        self._delete = client.register_script(_DELETE)
        self._names = client.register_script(_NAMES)
        self._open = client.register_script(_OPEN)

    def _key(self, scope: str) -> str:
        return self.store.state_key(scope)

    def _limits(self) -> list[int]:
        limits = self.limits
        return [limits.max_value_bytes, limits.max_scope_bytes, limits.max_names]

    def _checked(self, name: str, done: list[Any]) -> list[Any]:
        if done[0] in (-1, -2, -3):
            bound = _BOUNDS[-done[0] - 1]
            raise StateLimitError(name, bound, int(done[1]), getattr(self.limits, bound))
        return done

    async def get(self, scope: str, name: str) -> str | None:
        with self.store.guard():
            found = await self._get(keys=[self._key(scope)], args=[name])
        return None if found is None else bytes(found).decode()

    async def put(self, scope: str, name: str, value: str, *, ttl: float, expect: str | _Any | None = ANY) -> bool:
        if isinstance(expect, _Any):
            mode, expected = "any", ""
        else:
            mode, expected = ("absent", "") if expect is None else ("equal", expect)
        args = [name, value, check_ttl(ttl), *self._limits(), mode, expected]
        with self.store.guard():
            done = await self._put(keys=[self._key(scope)], args=args)
        return bool(self._checked(name, done)[0] == 1)

    async def incr(self, scope: str, name: str, amount: int, *, ttl: float) -> int:
        args = [name, amount, check_ttl(ttl), *self._limits()]
        with self.store.guard():
            done = await self._incr(keys=[self._key(scope)], args=args)
        if done[0] == -4:
            raise not_an_integer(name, bytes(done[1]).decode())
        if done[0] == -5:
            raise StateError(f"state {name!r}: incr would go past ±2**53; reset it with set()")
        return int(self._checked(name, done)[1])

    async def delete(self, scope: str, name: str) -> bool:
        with self.store.guard():
            return bool(await self._delete(keys=[self._key(scope)], args=[name]))

    async def names(self, scope: str) -> list[str]:
        with self.store.guard():
            found = await self._names(keys=[self._key(scope)])
        return sorted(bytes(name).decode() for name in found)

    async def clear(self, scope: str) -> None:
        with self.store.guard():
            await self.store.client.delete(self._key(scope))

    async def create_handle(self, handle: str, owner: str, *, ttl: float) -> None:
        ttl_ms = check_ttl(ttl)
        with self.store.guard():
            await self.store.client.set(self.store.key("sh", handle), f"{ttl_ms}:{owner}", px=ttl_ms)

    async def open_handle(self, handle: str) -> tuple[str, float] | None:
        with self.store.guard():
            found = await self._open(keys=[self.store.key("sh", handle)])
        if found is None:
            return None
        ttl_ms, owner = bytes(found).decode().split(":", 1)
        return owner, int(ttl_ms) / 1000
