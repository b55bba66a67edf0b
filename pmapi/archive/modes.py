"""pmSetMode's modes (pmapi.h's numbers): a tool names them without importing the reader."""

PM_MODE_LIVE = 0
PM_MODE_INTERP = 1
PM_MODE_FORW = 2
PM_MODE_BACK = 3
