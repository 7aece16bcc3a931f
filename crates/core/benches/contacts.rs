//! Benchmark: load a 20,000-card Contacts store (every card with a national phone number and
//! an address, 100 groups of 50) through `tidings_core::contacts::load`, against a baseline
//! measured in the same run: a bare `SELECT` of the same rows (cards, numbers, addresses and
//! memberships) on a plain read-only connection, each value read as text.
//!
//! A second figure is the reload the daemon makes after an edit in Contacts, with the numbers
//! the last load read cached (`load_cached`).
//!
//! `cargo bench -p tidings-core --bench contacts`. `TIDINGS_BENCH_CARDS` overrides the size.
//! Prints the median of several runs of each and their ratio, which docs/benchmarks.md keeps.

#![allow(clippy::cast_precision_loss)]

use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use tidings_core::contacts::{ContactsPaths, PhoneCache, Region, load, load_cached};
use tidings_fixtures::MacHome;
use tidings_fixtures::contacts::{AddressBook, Card, Entities, root_store};

const RUNS: usize = 7;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let cards: usize = std::env::var("TIDINGS_BENCH_CARDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let home = MacHome::new(dir.path());
    let started = Instant::now();
    let mut book = AddressBook::create(&root_store(&home), Entities::MACOS_26_6).expect("store");
    book.in_transaction(|b| {
        let mut pks = Vec::with_capacity(cards);
        for i in 0..cards {
            let card = Card::person(&format!("C{i}:ABPerson"), &format!("First{i}"), "Last")
                .phone(&format!("(202) 55{:01}-{:04}", i / 10_000 % 10, i % 10_000))
                .email(&format!("Person{i}@Example.com"));
            pks.push(b.add_card(&card)?);
        }
        for g in 0..100 {
            let group = b.add_group(&format!("G{g}:ABGroup"), &format!("Group {g}"))?;
            for &p in pks.iter().skip(g * 50).take(50) {
                b.add_member(group, p)?;
            }
        }
        Ok(())
    })
    .expect("cards");
    drop(book);
    println!(
        "fixture: {cards} cards built in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let paths = ContactsPaths::for_home(dir.path());
    let region = Region::parse("US").expect("region");
    let mut loads = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let c = load(&paths, &region);
        loads.push(t.elapsed());
        assert_eq!(c.people().len(), cards);
        assert!(c.person_for_handle("+12025500001").is_some());
    }

    // A reload as the daemon does it after an edit in Contacts: the cache holds the numbers
    // the last load read.
    let mut cache = PhoneCache::default();
    load_cached(&paths, &region, &mut cache);
    let mut reloads = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let c = load_cached(&paths, &region, &mut cache);
        reloads.push(t.elapsed());
        assert_eq!(c.people().len(), cards);
    }

    let uri = format!("file:{}?mode=ro", root_store(&home).display());
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
    let mut bares = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let conn = Connection::open_with_flags(&uri, flags).expect("open");
        let mut n = 0usize;
        for sql in [
            "SELECT Z_PK, ZUNIQUEID, ZFIRSTNAME, ZMIDDLENAME, ZLASTNAME, ZNICKNAME, \
             ZORGANIZATION, ZDISPLAYFLAGS FROM ZABCDRECORD WHERE Z_ENT IN (22, 23)",
            "SELECT ZOWNER, ZFULLNUMBER FROM ZABCDPHONENUMBER",
            "SELECT ZOWNER, ZADDRESS FROM ZABCDEMAILADDRESS",
            "SELECT Z_PK, ZUNIQUEID, ZNAME FROM ZABCDRECORD WHERE Z_ENT IN (18, 19, 20, 21)",
            "SELECT Z_22CONTACTS, Z_19PARENTGROUPS1 FROM Z_22PARENTGROUPS",
        ] {
            let mut stmt = conn.prepare(sql).expect("prepare");
            let cols = stmt.column_count();
            let mut rows = stmt.query([]).expect("query");
            while let Some(r) = rows.next().expect("row") {
                for i in 0..cols {
                    let v: rusqlite::types::Value = r.get(i).expect("value");
                    n += usize::from(!matches!(v, rusqlite::types::Value::Null));
                }
            }
        }
        bares.push(t.elapsed());
        assert!(n > cards);
    }

    let (load_ms, reload_ms, bare_ms) = (
        median(loads).as_secs_f64() * 1e3,
        median(reloads).as_secs_f64() * 1e3,
        median(bares).as_secs_f64() * 1e3,
    );
    println!("baseline: bare SELECT of the same rows  {bare_ms:.1} ms (median of {RUNS})");
    println!("load: {cards} cards, numbers to E.164    {load_ms:.1} ms (median of {RUNS})");
    println!(
        "load / baseline                          {:.1}",
        load_ms / bare_ms
    );
    println!("reload, numbers cached: {reload_ms:.1} ms (median of {RUNS})");
    println!(
        "reload / baseline                        {:.1}",
        reload_ms / bare_ms
    );
}
