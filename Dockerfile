# syntax=docker/dockerfile:1
# bytepath in a slim image: built in the official Rust image, run in Debian slim (glibc, as
# the build), as an unprivileged user. `bytepath server` and `bytepath mesh` need nothing
# else; `--netns` runs (ip from iproute2, root) are not meant for this image.
FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
RUN cargo build --release --locked --bin bytepath

FROM debian:bookworm-slim
COPY --from=build /src/target/release/bytepath /usr/local/bin/bytepath
USER 65532:65532
ENTRYPOINT ["bytepath"]
CMD ["--help"]
