//! Links the addon the way Node expects (napi-rs build setup).

fn main() {
    napi_build::setup();
}
