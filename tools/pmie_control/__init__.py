"""pmie_check and pmie_daily: PCP's housekeeping of the pmie daemons a host's pmie control
file names (started, checked and stopped by pmie_check; their log files rotated, culled
and compressed by pmie_daily).

control.py reads the control file (pmapi.controlfile's shape, pmie's fields and each
script's rules), running.py finds and touches what is outside it (statistics files,
processes, locks), check.py and daily.py are the two commands.
"""
