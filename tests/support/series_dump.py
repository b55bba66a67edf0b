"""Every pcp:* key of a key server as plain Python data, to compare what two loads stored."""

from __future__ import annotations

from typing import Any


def dump(client: Any, *, streams: bool = True) -> dict[bytes, tuple[str, Any]]:
    """key -> (type, content): strings, hashes and sets sorted, streams as entry lists
    (STREAMS false: the entry ids only), the geo set with its scores."""
    out: dict[bytes, tuple[str, Any]] = {}
    keys = client.scan_iter(match=b"pcp:*", count=1000)
    for key in keys:
        kind = client.type(key)
        kind = kind.decode() if isinstance(kind, bytes) else kind
        if kind == "string":
            value: Any = client.get(key)
        elif kind == "hash":
            value = sorted(client.hgetall(key).items())
        elif kind == "set":
            value = sorted(client.smembers(key))
        elif kind == "zset":
            value = client.zrange(key, 0, -1, withscores=True)
        elif kind == "stream":
            entries = client.xrange(key)
            value = (
                [(i, list(f.items())) for i, f in entries] if streams else [i for i, _ in entries]
            )
        else:
            value = None
        out[key] = (kind, value)
    return out


def differences(a: dict, b: dict, limit: int = 5) -> list[str]:
    """Lines saying how dump A differs from dump B (none when equal)."""
    lines = [f"only in the first: {k!r}" for k in sorted(set(a) - set(b))[:limit]]
    lines += [f"only in the second: {k!r}" for k in sorted(set(b) - set(a))[:limit]]
    differ = sorted(k for k in set(a) & set(b) if a[k] != b[k])
    lines += [f"{k!r}: {str(a[k])[:200]} != {str(b[k])[:200]}" for k in differ[:limit]]
    return lines
