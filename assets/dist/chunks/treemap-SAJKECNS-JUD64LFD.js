import{a as e,b as r}from"./chunk-PUE3OTNT.js";import"./chunk-TZKC56AF.js";import"./chunk-PHKIAKHS.js";export{e as TreemapModule,r as createTreemapServices};
