"""Where the repository's top-level folders go when installed; pyproject.toml holds the rest.

The repository keeps the design card's folders (pmapi pmda series agents pmcd pmlogger
pmproxy tools, and the data: pmns help systemd).  Installed, every one of them lives under
the one import name ``purepcp`` (a namespace of folders, as this file maps them), so the
project claims no generic name in site-packages.  The data go into the package that reads
them: the agents' namespace and help sources into ``purepcp.pmda`` (Agent.source_file reads
them), the systemd unit templates into ``purepcp.pmcd`` (``pmcd --install-units`` renders
them), and the documents those units name (their Documentation=) beside them.  Besides
``purepcp``, the two names PCP's own Python scripts import are installed as they are:
``pcp`` (pmapi, pmda, pmi, pmcc, pmconfig, mmv) and ``cpmapi`` (its constants and option
functions), both built on the layers under ``purepcp``; their folders are compat/pcp and
compat/cpmapi, so that a checkout on sys.path never hides PCP's own bindings.
"""

from setuptools import find_packages, setup

#: the code folders, each installed as purepcp.FOLDER
CODE_FOLDERS = ("pmapi", "pmda", "series", "agents", "pmcd", "pmlogger", "pmproxy", "tools")
#: PCP's own Python API names, installed under them (scripts written for PCP import these):
#: name -> the repository folder it is made from (under compat/, so that a checkout on
#: sys.path never hides PCP's own bindings from PCP's tools)
API_FOLDERS = {"pcp": "compat/pcp", "cpmapi": "compat/cpmapi"}
#: the data folders: installed package -> the repository folder it is made from
DATA_FOLDERS = {
    "purepcp.pmda.pmns": "pmns",
    "purepcp.pmda.help": "help",
    "purepcp.pmcd.systemd": "systemd",
    "purepcp.pmcd.docs": "docs",
}
#: what each data folder ships (all its files unless said here)
DATA_FILES = {
    # only the documents the systemd units name in Documentation= (purepcp.pmcd.units)
    "purepcp.pmcd.docs": ["operations.md", "pmproxy.md"],
}

PACKAGES = [
    f"purepcp.{name}"
    for name in find_packages(
        include=[f"{top}{rest}" for top in CODE_FOLDERS for rest in ("", ".*")]
    )
]

setup(
    packages=PACKAGES + list(DATA_FOLDERS) + list(API_FOLDERS),
    package_dir={
        **{f"purepcp.{top}": top for top in CODE_FOLDERS},
        **DATA_FOLDERS,
        **API_FOLDERS,
    },
    package_data={
        **{package: DATA_FILES.get(package, ["*"]) for package in DATA_FOLDERS},
        "purepcp.agents": ["*/*.conf"],
        "purepcp.pmcd": ["pmcd.conf"],
        "purepcp.pmlogger": ["config.default"],
        "purepcp.pmda": ["templates/*", "templates/*/*"],
        # the derived metrics read when PCP's own are not installed (purepcp.pmapi.derived.registry)
        "purepcp.pmapi.derived": ["defaults/*.conf"],
        # pmrep's metricsets, read when PCP's own are not installed (purepcp.tools.report.config)
        "purepcp.tools.report": ["conf/*.conf"],
        # pmlogconf's group files, read when PCP's own are not installed
        "purepcp.tools.pmlogconf": ["groupfiles/*", "groupfiles/*/*"],
        # pmieconf's rule templates, read when PCP's own are not installed
        "purepcp.tools.pmieconf": ["rules/*", "rules/*/*"],
        "purepcp.series": ["entries.lua"],
    },
    exclude_package_data={"": ["README.md"]},
)
