import{a as o,b as e}from"./chunk-PTDMMBZW.js";import"./chunk-TZKC56AF.js";import"./chunk-PHKIAKHS.js";export{o as InfoModule,e as createInfoServices};
