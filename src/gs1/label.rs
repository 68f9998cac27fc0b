//! A label as read: its kind, its elements in label order, and what it
//! names (a unit, a pallet, a SKU's lot). A [`Label`] is only ever built
//! whole: every element checked against the AI table, every date read, or
//! the label refused.

use serde::{Serialize, Serializer};

use super::ai::{self, Rule};
use super::date::{self, CivilDate};
use super::error::LabelError;

/// How the label was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelKind {
    /// A GS1 element string: with a symbology identifier, a leading group
    /// separator, in the bracketed human form, or bare (see the module's
    /// rule for bare ones).
    Gs1,
    /// A GS1 Digital Link URI.
    DigitalLink,
    /// An SGTIN-96 or SSCC-96 EPC in hex.
    Epc,
    /// Anything else: a bin label, a plain code, an EPC of another scheme.
    Plain,
}

/// One application identifier and its value, as the label carries it
/// (`{"ai":"17","value":"210119"}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Element {
    pub ai: String,
    pub value: String,
}

impl Element {
    pub(super) fn new(ai: &str, value: impl Into<String>) -> Element {
        Element {
            ai: ai.to_owned(),
            value: value.into(),
        }
    }
}

/// A label that parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    kind: LabelKind,
    elements: Vec<Element>,
    /// (17) as a date, read against the caller's today.
    expiry: Option<CivilDate>,
    /// The EPC in upper-case hex, for [`LabelKind::Epc`].
    epc: Option<String>,
    /// The text itself, without any symbology identifier, for
    /// [`LabelKind::Plain`].
    plain: Option<String>,
}

/// What a label identifies (docs/design.md, real labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named<'a> {
    /// One unit: (01)+(21), or an SGTIN EPC (`epc` is then its hex).
    Unit {
        gtin: &'a str,
        serial: &'a str,
        epc: Option<&'a str>,
    },
    /// A pallet: (00), or an SSCC EPC. An SSCC names the pallet whatever
    /// else its label says about the contents.
    Pallet { sscc: &'a str },
    /// A SKU's lot: (01) with (10) or (17) and no (21).
    SkuLot {
        gtin: &'a str,
        lot: Option<&'a str>,
        expiry: Option<CivilDate>,
    },
    /// Nothing the floor acts on: plain text, or GS1 data without those keys.
    Other,
}

impl Label {
    /// A label of `kind` with `elements`, each checked, dates read against
    /// `today`.
    pub(super) fn build(
        kind: LabelKind,
        elements: Vec<Element>,
        today: CivilDate,
        epc: Option<String>,
    ) -> Result<Label, LabelError> {
        if elements.is_empty() {
            return Err(LabelError::no_data());
        }
        let mut expiry = None;
        for (i, element) in elements.iter().enumerate() {
            let ai = element.ai.as_str();
            let spec = ai::spec(ai).ok_or_else(|| LabelError::unknown_ai(ai))?;
            ai::check_value(ai, spec, &element.value)?;
            if spec.rule == Rule::Date {
                let day = date::read_yymmdd(ai, &element.value, today)?;
                if ai == "17" {
                    expiry = Some(day);
                }
            }
            let earlier = elements[..i].iter().find(|e| e.ai == element.ai);
            if earlier.is_some_and(|e| e.value != element.value) {
                return Err(LabelError::repeated(ai));
            }
        }
        Ok(Label {
            kind,
            elements,
            expiry,
            epc,
            plain: None,
        })
    }

    pub(super) fn plain(text: &str) -> Label {
        Label {
            kind: LabelKind::Plain,
            elements: Vec::new(),
            expiry: None,
            epc: None,
            plain: Some(text.to_owned()),
        }
    }

    pub fn kind(&self) -> LabelKind {
        self.kind
    }

    /// The elements in label order (for an EPC, those it encodes; none for
    /// plain text).
    pub fn elements(&self) -> &[Element] {
        &self.elements
    }

    /// The value of the first element with `ai`.
    pub fn value(&self, ai: &str) -> Option<&str> {
        self.elements
            .iter()
            .find(|e| e.ai == ai)
            .map(|e| e.value.as_str())
    }

    /// (01), 14 digits (a Digital Link's GTIN-8/12/13 padded).
    pub fn gtin(&self) -> Option<&str> {
        self.value("01")
    }

    /// (21).
    pub fn serial(&self) -> Option<&str> {
        self.value("21")
    }

    /// (10).
    pub fn lot(&self) -> Option<&str> {
        self.value("10")
    }

    /// (17), the day it names (a day `00` read as the month's last).
    pub fn expiry(&self) -> Option<CivilDate> {
        self.expiry
    }

    /// (00), 18 digits.
    pub fn sscc(&self) -> Option<&str> {
        self.value("00")
    }

    /// The EPC in upper-case hex, when the label is one.
    pub fn epc(&self) -> Option<&str> {
        self.epc.as_deref()
    }

    /// For plain text, the text to use as before: the scan without any
    /// symbology identifier (`]C0B-12-03` gives `B-12-03`).
    pub fn plain_text(&self) -> Option<&str> {
        self.plain.as_deref()
    }

    /// What the label identifies.
    pub fn names(&self) -> Named<'_> {
        if let Some(sscc) = self.sscc() {
            return Named::Pallet { sscc };
        }
        match (self.gtin(), self.serial()) {
            (Some(gtin), Some(serial)) => Named::Unit {
                gtin,
                serial,
                epc: self.epc(),
            },
            (Some(gtin), None) if self.lot().is_some() || self.expiry.is_some() => Named::SkuLot {
                gtin,
                lot: self.lot(),
                expiry: self.expiry,
            },
            _ => Named::Other,
        }
    }
}

/// The JSON of a label: `{"kind","elements","gtin"?,"serial"?,"lot"?,
/// "expiry"?,"sscc"?}`, absent keys left out.
#[derive(Serialize)]
struct LabelJson<'a> {
    kind: LabelKind,
    elements: &'a [Element],
    #[serde(skip_serializing_if = "Option::is_none")]
    gtin: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    serial: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lot: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expiry: Option<CivilDate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sscc: Option<&'a str>,
}

impl Serialize for Label {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        LabelJson {
            kind: self.kind,
            elements: &self.elements,
            gtin: self.gtin(),
            serial: self.serial(),
            lot: self.lot(),
            expiry: self.expiry,
            sscc: self.sscc(),
        }
        .serialize(serializer)
    }
}
