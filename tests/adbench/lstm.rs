//! LSTM: ADBench's character-level LSTM loss (with its `+ 2` in the log-sum-exp and the hidden
//! state, not the layer input, in the input and change gates).

use super::reader::{ReadError, Rows};
use ad::reverse_diff;

/// An LSTM instance: parameters, initial state and the character sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct LstmInput {
    /// The number of layers.
    pub l: usize,
    /// The number of characters in the sequence.
    pub c: usize,
    /// The number of bits per character (the width of every layer).
    pub b: usize,
    /// `2l` rows of `4b`: per layer, the weights `[Wf, Wi, Wo, Wc]` then the biases.
    pub main_params: Vec<f64>,
    /// 3 rows of `b`: `in_weight`, `out_weight`, `out_bias`.
    pub extra_params: Vec<f64>,
    /// `2l` rows of `b`: per layer, the hidden state `h` then the cell state `s`.
    pub state: Vec<f64>,
    /// `c` rows of `b`, each 0 or 1.
    pub sequence: Vec<f64>,
}

impl LstmInput {
    /// The loss at this instance's parameters.
    pub fn objective(&self) -> f64 {
        self.objective_at(&self.main_params, &self.extra_params)
    }

    /// The loss at other parameters, with this instance's state and sequence.
    pub fn objective_at(&self, main_params: &[f64], extra_params: &[f64]) -> f64 {
        lstm_objective(
            main_params,
            extra_params,
            &self.state,
            &self.sequence,
            self.l,
            self.c,
            self.b,
        )
    }

    /// The loss and its gradient with respect to main_params then extra_params (`8lb + 3b`).
    pub fn objective_and_gradient(&self) -> (f64, Vec<f64>) {
        let (value, (d_main, d_extra)) = lstm_objective_grad(
            &self.main_params,
            &self.extra_params,
            &self.state,
            &self.sequence,
            self.l,
            self.c,
            self.b,
        );
        (value, [d_main, d_extra].concat())
    }

    /// The parameters as one vector, the layout of the gradient.
    pub fn parameters(&self) -> Vec<f64> {
        [self.main_params.as_slice(), self.extra_params.as_slice()].concat()
    }

    /// The loss at a concatenated parameter vector.
    pub fn objective_at_parameters(&self, parameters: &[f64]) -> f64 {
        let (main_params, extra_params) = parameters.split_at(self.main_params.len());
        self.objective_at(main_params, extra_params)
    }
}

/// Reads an LSTM file: `l c b`, main_params (2l rows of 4b), extra_params (3 rows of b), state
/// (2l rows of b), sequence (c rows of b).
pub fn read_lstm(text: &str) -> Result<LstmInput, ReadError> {
    let mut rows = Rows::new(text);
    let header = rows.header(&["l", "c", "b"])?;
    let (l, c, b) = (header[0], header[1], header[2]);
    let main_params = rows.matrix(2 * l, 4 * b, "main_params")?;
    let extra_params = rows.matrix(3, b, "extra_params")?;
    let state = rows.matrix(2 * l, b, "state")?;
    let sequence = rows.matrix(c, b, "sequence")?;
    rows.finish("the sequence")?;
    Ok(LstmInput {
        l,
        c,
        b,
        main_params,
        extra_params,
        state,
        sequence,
    })
}

/// `σ(x) = 1 / (1 + e^(−x))`.
#[reverse_diff]
fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The loss: for each character but the last, run the layers and score the prediction of the
/// next character; `−total / ((c − 1) b)`.
#[reverse_diff]
pub fn lstm_objective(
    main_params: &[f64],
    extra_params: &[f64],
    #[no_grad] state: &[f64],
    #[no_grad] sequence: &[f64],
    l: usize,
    c: usize,
    b: usize,
) -> f64 {
    let in_weight = &extra_params[0..b];
    let out_weight = &extra_params[b..2 * b];
    let out_bias = &extra_params[2 * b..3 * b];
    // The state carries over from step to step (it starts as constant data).
    let mut state: Vec<f64> = state.iter().map(|&value| value as f64).collect();
    let mut input = vec![0.0; b];
    let mut prediction = vec![0.0; b];
    let mut total = 0.0;
    for t in 0..c - 1 {
        let x = &sequence[t * b..(t + 1) * b];
        for i in 0..b {
            input[i] = x[i] * in_weight[i];
        }
        for layer in 0..l {
            let weight = &main_params[2 * layer * 4 * b..(2 * layer + 1) * 4 * b];
            let bias = &main_params[(2 * layer + 1) * 4 * b..(2 * layer + 2) * 4 * b];
            let (hidden, cell) = state[2 * layer * b..(2 * layer + 2) * b].split_at_mut(b);
            for i in 0..b {
                // Ascribed, so the macro knows the calls return scalars: each call is one
                // record with its argument, and `forget`, `in_gate` and `change`, read once,
                // are computed inside `cell[i]`'s record.
                let forget: f64 = sigmoid(input[i] * weight[i] + bias[i]);
                let in_gate: f64 = sigmoid(hidden[i] * weight[b + i] + bias[b + i]);
                let out_gate: f64 = sigmoid(input[i] * weight[2 * b + i] + bias[2 * b + i]);
                let change = (hidden[i] * weight[3 * b + i] + bias[3 * b + i]).tanh();
                cell[i] = cell[i] * forget + in_gate * change;
                hidden[i] = out_gate * cell[i].tanh();
            }
            input.copy_from_slice(hidden);
        }
        for i in 0..b {
            prediction[i] = input[i] * out_weight[i] + out_bias[i];
        }
        // ADBench's log-sum-exp, with its `+ 2`.
        let lse = (prediction.iter().map(|y| y.exp()).sum::<f64>() + 2.0).ln();
        let next = &sequence[(t + 1) * b..(t + 2) * b];
        for i in 0..b {
            total += next[i] * (prediction[i] - lse);
        }
    }
    -total / ((c - 1) * b) as f64
}
