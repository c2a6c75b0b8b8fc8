//! A table as data, before any format: its columns (title with unit, the
//! machine key CSV uses, whether it holds numbers) and its rows of cells,
//! each with the text people read (in the one number format of
//! [`crate::format`]) and the raw value machines read. The summary and the
//! crank tables are built once as a [`Table`]; the terminal, Markdown, CSV
//! and HTML only lay it out, so a figure cannot read differently in two of
//! them.

use stampede_schema::ErrorCategory;

/// The columns that say which run a row belongs to (the per-target and
/// per-stage tables list every run in one table): app, knobs, profile, iteration.
pub fn run_columns() -> [Column; 4] {
    [
        Column::new("app", "app", false),
        Column::new("knobs", "knobs", false),
        Column::new("profile", "profile", false),
        Column::new("iter", "iteration", true),
    ]
}

/// The cells of [`run_columns`] for one run.
pub fn run_cells(run: &crate::schema::Run) -> [Cell; 4] {
    let key = crate::summary::ConfigKey::of(run);
    [
        Cell::text(key.app.clone()),
        Cell::text(key.knobs_label()),
        Cell::text(key.profile),
        Cell::count(run.iteration.into()),
    ]
}

/// One column per error category, in the one order and words every table
/// uses (`stampede_schema::ErrorCategory`).
pub fn error_columns() -> [Column; ErrorCategory::ALL.len()] {
    ErrorCategory::ALL.map(|c| Column::new(c.title(), c.key(), true))
}

/// The cells of [`error_columns`] for one document's errors.
pub fn error_cells(errors: &stampede_schema::Errors) -> [Cell; ErrorCategory::ALL.len()] {
    ErrorCategory::ALL.map(|c| Cell::count(c.count(errors)))
}

/// One column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// What people read, with the unit: `p99 latency (ms)`.
    pub title: String,
    /// What machines read (the CSV header): `p99_ms`.
    pub key: &'static str,
    /// Numbers are right-aligned.
    pub numeric: bool,
}

impl Column {
    pub fn new(title: &str, key: &'static str, numeric: bool) -> Column {
        Column { title: title.to_owned(), key, numeric }
    }
}

/// One cell: the text people read and the plain value machines read
/// (full precision, empty when not measured).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cell {
    pub text: String,
    pub raw: String,
}

impl Cell {
    /// Text that is its own raw value.
    pub fn text(text: impl Into<String>) -> Cell {
        let text = text.into();
        Cell { raw: text.clone(), text }
    }

    /// A figure: about three significant digits for people, full precision for machines.
    pub fn figure(value: Option<f64>) -> Cell {
        Cell { text: crate::format::num(value), raw: crate::format::raw(value) }
    }

    /// A count with thousands grouped.
    pub fn count(value: u64) -> Cell {
        Cell { text: crate::format::count(Some(value)), raw: value.to_string() }
    }
}

/// One row; `invalid` rows are marked (struck through in HTML).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row {
    pub cells: Vec<Cell>,
    pub invalid: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

impl Table {
    /// The cell of `row` under the column titled `title`.
    pub fn cell(&self, row: usize, title: &str) -> Option<&Cell> {
        let i = self.columns.iter().position(|c| c.title == title)?;
        self.rows.get(row)?.cells.get(i)
    }
}
