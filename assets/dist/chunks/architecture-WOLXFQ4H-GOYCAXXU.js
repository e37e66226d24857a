import{a as e,b as r}from"./chunk-ZV6BRPXT.js";import"./chunk-TZKC56AF.js";import"./chunk-PHKIAKHS.js";export{e as ArchitectureModule,r as createArchitectureServices};
