# hookproof in a container, for teams whose receiver is not in Python (Node, Go, Ruby, Java):
#
#   docker run --rm --network host -v "$PWD:/project" -w /project hookproof/hookproof certify
#
# One image serves every command (certify, explore, storm, send, ...): the entry point is
# `hookproof`. It is built FROM the local Debian base image (chaos/images/build_base.sh makes
# both, with no registry), with `docker build --network host` so pip reaches the package index.
ARG BASE_IMAGE=hookproof/base:latest
FROM ${BASE_IMAGE}

ENV VIRTUAL_ENV=/opt/hookproof/venv \
    PATH=/opt/hookproof/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DEFAULT_TIMEOUT=120
ARG PIP_INDEX_URL

RUN python3 -m venv "$VIRTUAL_ENV"

# Dependencies first, in their own layer: only a pyproject.toml change reinstalls them.
# The `load` extra brings Locust (storms); `postgres` the driver for PostgreSQL observers;
# `chaos` the docker SDK, so `[target.docker]` and `--chaos` start the receiver's container
# through the host's daemon (run with -v /var/run/docker.sock:/var/run/docker.sock).
COPY .build/ca.crt chaos/images/pyproject_requirements.py pyproject.toml /opt/hookproof/build/
RUN cd /opt/hookproof/build \
    && if [ -s ca.crt ]; then export PIP_CERT="$PWD/ca.crt"; fi \
    && python pyproject_requirements.py pyproject.toml load postgres chaos > requirements.txt \
    && pip install -q --upgrade pip setuptools wheel \
    && pip install -q -r requirements.txt

COPY pyproject.toml README.md LICENSE /opt/hookproof/src/
COPY hookproof /opt/hookproof/src/hookproof
COPY simulator /opt/hookproof/src/simulator
COPY scenarios /opt/hookproof/src/scenarios
COPY chaos /opt/hookproof/src/chaos
COPY loadtests /opt/hookproof/src/loadtests
COPY reports /opt/hookproof/src/reports
RUN cd /opt/hookproof/build \
    && if [ -s ca.crt ]; then export PIP_CERT="$PWD/ca.crt"; fi \
    && pip install -q --no-deps --no-build-isolation /opt/hookproof/src \
    && rm -rf /opt/hookproof/src \
    && echo "hookproof's container image: Python and hookproof alone" > /opt/hookproof/image \
    && hookproof --version

WORKDIR /project
ENTRYPOINT ["hookproof"]
CMD ["--help"]
