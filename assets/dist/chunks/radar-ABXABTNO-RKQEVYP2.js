import{a as r,b as e}from"./chunk-RTVDG6U4.js";import"./chunk-TZKC56AF.js";import"./chunk-PHKIAKHS.js";export{r as RadarModule,e as createRadarServices};
