/** The model artifact format (format.ts has the layout), its checksums, writer and parser. */
export * from './format';
export * from './checksum';
export * from './write';
export * from './parse';
