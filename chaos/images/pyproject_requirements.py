"""Print the requirements of pyproject.toml's project plus the given extras, one per line.

Used by receivers.Dockerfile to install the dependencies in their own layer (so a
source change does not reinstall them). Self-references such as
``hookproof[verifiers]`` are expanded, not printed.

    python3 pyproject_requirements.py pyproject.toml verifiers postgres examples
"""

import re
import sys
import tomllib


def requirements(project: dict, extras: list[str]) -> list[str]:
    name = project["name"].lower()
    optional = project.get("optional-dependencies", {})
    out: list[str] = []
    seen: set[str] = set()

    def add(reqs: list[str]) -> None:
        for req in reqs:
            match = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(\[([^\]]*)\])?", req)
            if match and match.group(1).lower() == name:
                for extra in (match.group(3) or "").split(","):
                    extra = extra.strip()
                    if extra and extra not in seen:
                        seen.add(extra)
                        add(optional[extra])
            elif req not in out:
                out.append(req)

    add(project.get("dependencies", []))
    for extra in extras:
        if extra not in optional:
            raise SystemExit(f"unknown extra: {extra}")
        if extra not in seen:
            seen.add(extra)
            add(optional[extra])
    return out


def main(argv: list[str]) -> None:
    with open(argv[1], "rb") as fh:
        project = tomllib.load(fh)["project"]
    print("\n".join(requirements(project, argv[2:])))


if __name__ == "__main__":
    main(sys.argv)
