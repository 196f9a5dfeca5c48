# The rebind binary in a minimal image, for CI jobs that run containers
# (docs/install.md, "Container image"). Not built or run on the project's
# machine (it pulls no images); the build stage is the documented
# `cargo build --release --locked`.
#
#   docker build -t rebind .
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/repo" rebind check

# Build: the Rust toolchain at rust-version (Cargo.toml) or newer. git2 builds
# its vendored libgit2 (and zlib) with the C compiler, which this image has.
FROM rust:1.88-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin rebind \
    && strip target/release/rebind

# Run: glibc and libgcc, no shell, no package manager. rebind links glibc
# dynamically (libgit2 is linked in), so distroless/static is not enough.
FROM gcr.io/distroless/cc-debian12
COPY --from=build /src/target/release/rebind /usr/local/bin/rebind
WORKDIR /repo
ENTRYPOINT ["/usr/local/bin/rebind"]
CMD ["--help"]
