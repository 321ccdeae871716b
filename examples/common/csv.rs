//! Reads the small CSV data sets in `data/datasets/` (a header line, then rows of numbers
//! separated by commas). Shared by the examples through `#[path]`.

/// A table of numbers with named columns.
pub struct Table {
    /// The column names from the header line, without quotes.
    pub columns: Vec<String>,
    /// The rows, each with one number per column.
    pub rows: Vec<Vec<f64>>,
}

/// Parses `text`; the error names the line and the field that is not a number, or the line with
/// the wrong number of fields.
pub fn parse_csv(text: &str) -> Result<Table, String> {
    let mut lines = text.lines().enumerate();
    let (_, header) = lines.next().ok_or("empty file: expected a header line")?;
    let columns: Vec<String> = header
        .split(',')
        .map(|name| name.trim().trim_matches('"').to_string())
        .collect();
    let mut rows = Vec::new();
    for (index, line) in lines.filter(|(_, line)| !line.trim().is_empty()) {
        let row =
            line.split(',')
                .map(|field| {
                    field.trim().parse::<f64>().map_err(|_| {
                        format!("line {}: expected a number, found {field:?}", index + 1)
                    })
                })
                .collect::<Result<Vec<f64>, String>>()?;
        if row.len() != columns.len() {
            return Err(format!(
                "line {}: expected {} fields, found {}",
                index + 1,
                columns.len(),
                row.len()
            ));
        }
        rows.push(row);
    }
    Ok(Table { columns, rows })
}

/// Standardises the columns of `train` and `test` (row-major, `width` values per row) with the
/// mean and standard deviation of `train`, so every feature has mean 0 and variance 1 there.
pub fn standardise(train: &mut [f64], test: &mut [f64], width: usize) {
    let count = (train.len() / width) as f64;
    for column in 0..width {
        let mean = train.iter().skip(column).step_by(width).sum::<f64>() / count;
        let variance = train
            .iter()
            .skip(column)
            .step_by(width)
            .map(|x| (x - mean).powi(2))
            .sum::<f64>()
            / count;
        let deviation = variance.sqrt().max(f64::MIN_POSITIVE);
        for x in train
            .iter_mut()
            .skip(column)
            .step_by(width)
            .chain(test.iter_mut().skip(column).step_by(width))
        {
            *x = (*x - mean) / deviation;
        }
    }
}
