//! The format parser on format files copied from this kernel's tracefs (6.18), and tracefs
//! itself where this process may mount it.
use super::*;

const COPY: &str = include_str!("tracefs_fixtures/skb_copy_datagram_iovec.format");
const KFREE: &str = include_str!("tracefs_fixtures/kfree_skb.format");
const XMIT: &str = include_str!("tracefs_fixtures/net_dev_xmit.format");
const SWITCH: &str = include_str!("tracefs_fixtures/sched_switch.format");

#[test]
fn the_copy_event_gives_its_id_and_its_fields_where_the_file_says() {
    let f = EventFormat::parse(COPY).unwrap();
    assert_eq!((f.name.as_str(), f.id), ("skb_copy_datagram_iovec", 2308));
    let len = f.field("len").unwrap();
    assert_eq!((len.offset, len.size, len.signed), (16, 4, true));
    assert_eq!(len.c_type, "int");
    let skb = f.field("skbaddr").unwrap();
    assert_eq!(
        (skb.c_type.as_str(), skb.offset, skb.size),
        ("const void *", 8, 8)
    );
    assert_eq!(f.field("common_pid").unwrap().offset, 4);
    assert_eq!(f.fields.len(), 6);
    assert!(f.field("bytes").unwrap_err().contains("has no field bytes"));
}

#[test]
fn the_drop_reasons_are_named_from_the_print_format() {
    let f = EventFormat::parse(KFREE).unwrap();
    let reason = f.field("reason").unwrap();
    assert_eq!((reason.offset, reason.size, reason.signed), (36, 4, false));
    assert_eq!(reason.c_type, "enum skb_drop_reason");
    let names = f.symbols("reason");
    assert_eq!(names.first(), Some(&(2, "NOT_SPECIFIED".to_string())));
    assert!(names.contains(&(3, "NO_SOCKET".to_string())));
    assert!(names.contains(&(13, "OTHERHOST".to_string())));
    assert_eq!(names.last(), Some(&(128, "MAX".to_string())));
    assert_eq!(names.len(), 127);
    // A field the print format shows as a plain number has no names.
    assert!(f.symbols("protocol").is_empty());
}

#[test]
fn flags_lists_are_not_taken_for_names() {
    let f = EventFormat::parse(SWITCH).unwrap();
    assert!(f.symbols("prev_state").is_empty());
    let comm = f.field("prev_comm").unwrap();
    assert_eq!((comm.c_type.as_str(), comm.size), ("char[16]", 16));
    assert_eq!(f.field("next_pid").unwrap().c_type, "pid_t");
}

#[test]
fn a_device_name_is_read_where_its_data_loc_points() {
    let f = EventFormat::parse(XMIT).unwrap();
    let name = f.field("name").unwrap();
    assert!(name.is_data_loc());
    assert_eq!((name.offset, name.size), (24, 4));
    // A record as the kernel lays it out: fixed fields, then the name at offset 28.
    let mut raw = vec![0u8; 28];
    raw[16..20].copy_from_slice(&9000u32.to_ne_bytes());
    raw[20..24].copy_from_slice(&0i32.to_ne_bytes());
    raw[24..28].copy_from_slice(&((3u32 << 16) | 28).to_ne_bytes());
    raw.extend_from_slice(b"lo\0\0");
    assert_eq!(name.text(&raw), Some("lo"));
    assert_eq!(f.field("len").unwrap().unsigned(&raw), Some(9000));
    assert_eq!(f.field("rc").unwrap().integer(&raw), Some(0));
    // A location past the record's end reads as nothing, never as garbage.
    raw[24..28].copy_from_slice(&((3u32 << 16) | 60).to_ne_bytes());
    assert_eq!(name.text(&raw), None);
}

#[test]
fn signed_fields_are_sign_extended_and_unsigned_ones_are_not() {
    let f = EventFormat::parse(COPY).unwrap();
    let mut raw = vec![0u8; 20];
    raw[16..20].copy_from_slice(&(-14i32).to_ne_bytes());
    let len = f.field("len").unwrap();
    assert_eq!(len.integer(&raw), Some(-14));
    assert_eq!(len.unsigned(&raw), Some(u64::from((-14i32) as u32)));
    // A record cut short reads as nothing.
    assert_eq!(len.integer(&raw[..18]), None);
}

#[test]
fn a_file_without_an_id_or_with_a_bad_field_is_refused() {
    assert!(EventFormat::parse("name: x\nformat:\n")
        .unwrap_err()
        .contains("no ID"));
    let bad = "name: x\nID: 1\nformat:\n\tfield:int len;\toffset:x;\tsize:4;\tsigned:1;\n";
    assert!(EventFormat::parse(bad).unwrap_err().contains("offset"));
}

#[test]
fn tracefs_lists_the_events_and_a_mount_made_here_is_undone() {
    let _turn = TRACEFS_TURN.lock().unwrap_or_else(|p| p.into_inner());
    let root = Path::new(TRACEFS);
    let before = is_mounted_at(root);
    let fs = match Tracefs::open() {
        Ok(fs) => fs,
        Err(reason) => return crate::skip_test(None, reason),
    };
    assert_eq!(fs.mounted_here(), !before);
    let copy = fs.event("skb", "skb_copy_datagram_iovec").unwrap();
    assert!(copy.field("len").is_ok());
    assert!(fs
        .event("skb", "no_such_event")
        .unwrap_err()
        .contains("skb:no_such_event is not listed"));
    drop(fs);
    assert_eq!(is_mounted_at(root), before);
}
