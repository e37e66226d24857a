import{a as e,b as r}from"./chunk-DCDA5S77.js";import"./chunk-TZKC56AF.js";import"./chunk-PHKIAKHS.js";export{e as CynefinModule,r as createCynefinServices};
