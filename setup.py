"""Where the repository's top-level folders go when installed; pyproject.toml holds the rest.

The repository keeps the design card's folders (pmda pmcd agents pmns help systemd ...).
Installed, none claims a generic import name: the agents become the package
``purepcp_agents``, and the data go into the package that reads them: the agents'
namespace and help sources into ``pmda`` (Agent.source_file reads them), the systemd
unit templates into ``pmcd`` (``pmcd --install-units`` renders them).
"""

from setuptools import find_packages, setup

#: installed package -> the repository folder it is made from
FOLDERS = {
    "purepcp_agents": "agents",
    "pmda.pmns": "pmns",
    "pmda.help": "help",
    "pmcd.systemd": "systemd",
}

CODE = find_packages(
    include=[
        f"{top}{rest}"
        for top in ("pmapi", "pmda", "pmcd", "pmlogger", "pmproxy")
        for rest in ("", ".*")
    ]
)
AGENTS = [p.replace("agents", "purepcp_agents", 1) for p in find_packages(include=["agents*"])]

setup(
    packages=CODE + AGENTS + ["pmda.pmns", "pmda.help", "pmcd.systemd"],
    package_dir=FOLDERS,
    package_data={
        "pmda.pmns": ["*"],
        "pmda.help": ["*"],
        "pmcd.systemd": ["*"],
        "purepcp_agents": ["*/*.conf"],
        "pmcd": ["pmcd.conf"],
        "pmlogger": ["config.default"],
        "pmda": ["templates/*", "templates/*/*"],
        # the derived metrics read when PCP's own are not installed (pmapi.derived.registry)
        "pmapi.derived": ["defaults/*.conf"],
        # pmrep's metricsets, read when PCP's own are not installed (pmapi.cli.report.config)
        "pmapi.cli.report": ["conf/*.conf"],
        "pmapi.series": ["entries.lua"],
    },
    exclude_package_data={"": ["README.md"]},
)
