# The vero-harbor worker (and CLI) image. Multi-stage: build with dev dependencies, run without them, as a
# non-root user. Connection settings come from the environment (docs/deploy.md): VERO_TEMPORAL_ADDRESS,
# VERO_TEMPORAL_NAMESPACE, VERO_TASK_QUEUE, VERO_TEMPORAL_API_KEY / VERO_TEMPORAL_TLS*.
# It holds real Harbor (HARBOR_VERSION, a supported one, pinned; `harbor` on PATH) with Debian's Docker CLI and
# compose v2 plugin: give it a Docker engine (docker-compose.dev.yml mounts the host's socket) or set
# `harbor.environment` to a cloud sandbox.
FROM node:20-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY model model
COPY infra infra
COPY harbor harbor
COPY client client
COPY activities activities
COPY workflows workflows
COPY worker worker
COPY cli cli
COPY compiler compiler
COPY sidecar sidecar
COPY bench bench
COPY harbor-standin harbor-standin
COPY test/replay test/replay
RUN npm run build

FROM node:20-trixie-slim
ARG HARBOR_VERSION=0.26.0
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates tini python3 python3-venv docker-cli docker-compose \
  && rm -rf /var/lib/apt/lists/* \
  && useradd -m -u 1001 vero && mkdir -p /data/vero && chown vero:vero /data/vero
RUN case "$HARBOR_VERSION" in 0.25.0 | 0.26.0) ;; *) echo "HARBOR_VERSION=$HARBOR_VERSION is not a supported Harbor version (0.25.0, 0.26.0)" >&2; exit 1 ;; esac \
  && python3 -m venv /opt/harbor && /opt/harbor/bin/pip install --no-cache-dir --disable-pip-version-check -q "harbor==$HARBOR_VERSION" \
  && /opt/harbor/bin/harbor --version
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY scripts ./scripts
COPY examples ./examples
COPY harbor-standin/harbor ./harbor-standin/harbor
COPY harbor/forkserver.py ./harbor/forkserver.py
USER vero
ENV VERO_HOME=/data/vero NODE_ENV=production PATH=/opt/harbor/bin:$PATH
# tini forwards SIGTERM: the worker drains (finishes or cancels in-flight harbor runs within its grace time), then exits.
ENTRYPOINT ["/usr/bin/tini", "--", "/app/bin/vero"]
CMD ["worker"]
