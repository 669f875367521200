// The JSON Schema keywords solve_log.schema.json uses, checked as the daemon checks them
// (daemon/ingest/client_block.py): a list of "field: problem" strings, empty when valid.
import { readFileSync } from "node:fs";

export const SCHEMA_PATH = new URL("../../../daemon/ingest/solve_log.schema.json", import.meta.url);
export const schema = JSON.parse(readFileSync(SCHEMA_PATH, "utf8"));

const is = {
  object: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
  array: Array.isArray,
  string: (v) => typeof v === "string",
  integer: Number.isInteger,
  number: (v) => typeof v === "number" && Number.isFinite(v),
};

export function problems(value, rule = schema, field = "$") {
  if (rule.$ref) rule = schema.$defs[rule.$ref.split("/").pop()];
  const out = [];
  if (rule.type && !is[rule.type](value)) return [`${field}: must be ${rule.type}`];
  if ("const" in rule && value !== rule.const) out.push(`${field}: must be ${rule.const}`);
  if (rule.enum && !rule.enum.includes(value)) out.push(`${field}: not in enum`);
  if ("minimum" in rule && value < rule.minimum) out.push(`${field}: below minimum`);
  if ("maximum" in rule && value > rule.maximum) out.push(`${field}: above maximum`);
  if ("maxLength" in rule && value.length > rule.maxLength) out.push(`${field}: too long`);
  if (rule.format === "date-time" && Number.isNaN(Date.parse(value))) out.push(`${field}: not a date-time`);
  if (rule.type === "array") {
    if (value.length > (rule.maxItems ?? Infinity)) out.push(`${field}: too many items`);
    value.forEach((item, i) => out.push(...problems(item, rule.items ?? {}, `${field}[${i}]`)));
  }
  if (rule.type === "object") {
    for (const name of rule.required ?? []) if (!(name in value)) out.push(`${field}.${name}: required`);
    for (const [name, item] of Object.entries(value)) {
      if (rule.properties?.[name]) out.push(...problems(item, rule.properties[name], `${field}.${name}`));
      else if (rule.additionalProperties === false) out.push(`${field}.${name}: not a field`);
    }
  }
  return out;
}
