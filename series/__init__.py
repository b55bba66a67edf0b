"""pmseries: a fleet's history in Redis (or Valkey), in PCP 6's key layout.

The identifiers (`ids`), the key names and value encodings (`schema`), the connection
to a single server or a cluster (`store`), loading archives into it (`load`), and the
query language with its evaluation (`parse`, `query`), as libpcp_web has them.
"""
