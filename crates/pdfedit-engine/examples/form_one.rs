//! Debug helper: `form_one IN OUT FLATTEN(0|1) NAME=VALUE...` fills fields and prints the
//! result summary (`true`/`false` values are booleans, `a|b` a multi-select list).
fn main() {
    use pdfedit_engine::edit::*;
    let a: Vec<String> = std::env::args().collect();
    let lib = std::env::var("PDFIUM_LIB_PATH").expect("PDFIUM_LIB_PATH");
    pdfedit_engine::init(std::path::Path::new(&lib)).expect("init");
    let bytes = std::fs::read(&a[1]).expect("read");
    let fields = a[4..]
        .iter()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| {
            let v = match v {
                "true" => FieldInput::Bool(true),
                "false" => FieldInput::Bool(false),
                v if v.contains('|') => FieldInput::Many(v.split('|').map(String::from).collect()),
                v => FieldInput::Text(v.to_string()),
            };
            (k.to_string(), v)
        })
        .collect();
    let req = EditRequest {
        edits: vec![Edit {
            op: EditOp::Form,
            form: Some(FormSpec {
                fields,
                flatten: a[3] == "1",
            }),
            ..Edit::default()
        }],
        options: EditOptions {
            break_signature: true,
            ..EditOptions::default()
        },
        ..EditRequest::default()
    };
    let r = edit(&bytes, &req).expect("edit");
    for c in &r.changes {
        println!(
            "change p{} {:?} {:?} {} {} {} collateral={} box={:?}",
            c.page,
            c.field,
            c.value,
            c.font_source,
            c.font_used,
            c.verified,
            c.collateral_pixels,
            c.bbox
        );
    }
    for f in &r.failed {
        println!("failed {:?} {}: {}", f.field, f.reason, f.message);
    }
    println!("warnings {:?}", r.warnings);
    std::fs::write(&a[2], &r.pdf).expect("write");
}
