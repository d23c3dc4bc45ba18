# hookproof/receivers: the project installed into a venv on the local base image.
# Built by chaos/images/build_base.sh (context: the repo plus .build/ca.crt), with
# `docker build --network host` so pip reaches PyPI without bridge networking.
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
COPY .build/ca.crt chaos/images/pyproject_requirements.py pyproject.toml /opt/hookproof/build/
RUN cd /opt/hookproof/build \
    && if [ -s ca.crt ]; then export PIP_CERT="$PWD/ca.crt"; fi \
    && python pyproject_requirements.py pyproject.toml verifiers postgres examples > requirements.txt \
    && pip install -q --upgrade pip setuptools wheel \
    && pip install -q -r requirements.txt

COPY . /opt/hookproof/src
RUN cd /opt/hookproof/build \
    && if [ -s ca.crt ]; then export PIP_CERT="$PWD/ca.crt"; fi \
    && pip install -q --no-deps --no-build-isolation /opt/hookproof/src \
    && mkdir -p /opt/hookproof/zoo && cp -r /opt/hookproof/src/examples /opt/hookproof/zoo/ \
    && rm -rf /opt/hookproof/src \
    && python -c "import hookproof.simulator, httpx"

# The reference receivers of examples/ (not part of the installed package), importable
# as `python -m examples.receivers.<name>` from any directory.
ENV PYTHONPATH=/opt/hookproof/zoo
RUN python -c "import examples.receivers.inbox_sync"
WORKDIR /opt/hookproof
CMD ["python"]
