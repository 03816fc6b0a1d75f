# syntax=docker/dockerfile:1
# One image per bundled component, all from one build: `docker build --target scheduler -t componentbase-scheduler .`
# (targets: scheduler, virtual-kubelet, hello, widgets, demo, apiserver; the last stage, demo, is the default).
# The build stage installs the wheel into a venv; the runtime stage copies only that venv onto the same slim
# base, so the image holds no compiler, no pip cache and no source tree. Every dependency ships wheels, so
# neither stage needs a compiler at all.

ARG PYTHON_VERSION=3.12

FROM python:${PYTHON_VERSION}-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY componentbase ./componentbase
COPY componentbase_examples ./componentbase_examples
RUN python -m venv /opt/componentbase && /opt/componentbase/bin/pip install .

FROM python:${PYTHON_VERSION}-slim AS runtime
COPY --from=build /opt/componentbase /opt/componentbase
ENV PATH=/opt/componentbase/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
# A numeric non-root user, so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
RUN groupadd --system --gid 65532 componentbase \
 && useradd --system --uid 65532 --gid 65532 --home-dir /home/componentbase --create-home componentbase
USER 65532:65532
WORKDIR /home/componentbase

FROM runtime AS scheduler
ENTRYPOINT ["componentbase-scheduler"]

FROM runtime AS virtual-kubelet
ENTRYPOINT ["componentbase-virtual-kubelet"]

FROM runtime AS hello
ENTRYPOINT ["componentbase-hello"]

# Its webhooks listen on 9443 (--webhook-port), with the certificate mounted on --webhook-cert-dir.
FROM runtime AS widgets
EXPOSE 9443
ENTRYPOINT ["componentbase-widgets"]

# The loopback API server listens on 127.0.0.1 only: it serves containers of the same pod (a test sidecar).
FROM runtime AS apiserver
ENTRYPOINT ["componentbase-apiserver"]

FROM runtime AS demo
ENTRYPOINT ["componentbase-demo"]
